package protocol

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// A follower that missed its leader's new claim (the leader stepped down
// and won again: a lost lease, a long pause) hears that leader's heartbeat
// under the new term with no claim between. It is the node it follows,
// heard just now: it follows the new term at once, as a new leadership
// (its ledger goes out for the new leader's gathering), and neither
// ignores it as a rival, reports it nor rejects it.
func TestFollowerTakesUpItsLeadersNewTermWithoutAClaim(t *testing.T) {
	for _, quorum := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "quorum"}[quorum], func(t *testing.T) {
			c := testConfig("me", 100, 1)
			if quorum {
				c.ClusterSize = 3
			}
			f, err := NewNode(c, t0)
			require.NoError(t, err)
			f.SetPayload([]byte("pool"))
			f.Ready()
			now := t0
			if quorum { // let the start-up grant run out, so f acks
				now = now.Add(c.Timings().MaxPromise)
			}
			for seq := uint64(1); seq <= 3; seq++ {
				now = now.Add(c.Interval)
				f.Step(now, beat("l", 7, seq, 1))
			}
			require.Equal(t, MakeTerm(1, 100, NodeTag("l")), f.Status().Leader.Term)
			f.Ready()

			now = now.Add(c.Interval)
			next := beat("l", 7, 4, 2) // same process, beat 4, term of round 2
			f.Step(now, next)
			st := f.Status()
			assert.Equal(t, election.Follower, st.Role)
			assert.Equal(t, "l", st.Leader.ID)
			assert.Equal(t, next.Term, st.Leader.Term, "follows the new term at once")
			assert.Zero(t, f.Stats().RivalHeartbeats, "its own leader is no rival")
			assert.Zero(t, f.Stats().RejectionsSent)
			out := f.Ready()
			assert.Contains(t, types(out), Ledger, "a new leadership: the pool goes out for its gathering")
			for _, e := range out {
				assert.Zero(t, e.Msg.Flags&FlagRejected, "no rejection of its own leader: %+v", e.Msg)
				if e.Msg.Flags&FlagReport != 0 {
					assert.Equal(t, next.Term, e.Msg.Heard.Term, "a report is presence under the new term, no rival report: %+v", e.Msg)
				}
			}
			if quorum {
				assert.Contains(t, types(out), Ack, "acks the new term's heartbeat")
			}
		})
	}
}

// A candidate gives its claim up on a rejection only if the rejecting
// follower's evidence of the live leader is more than Misses beats ahead of
// its own: exactly Misses ahead, the candidate still hears that leader as
// well as hearsUs counts it (Misses beats behind is still hearing).
func TestRejectionCountsOnlyMoreThanMissesBeatsAhead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ahead   uint64
		givesUp bool
	}{
		{"exactly misses ahead", 0, false},
		{"one more", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newTestNode(t)
			now := t0
			for seq := uint64(1); seq <= 5; seq++ {
				now = now.Add(n.cfg.Interval)
				n.Step(now, beat("l", 7, seq, 1))
			}
			for range 100 {
				if n.Status().Role == election.Candidate {
					break
				}
				now = n.NextTick()
				n.Tick(now)
			}
			require.Equal(t, election.Candidate, n.Status().Role, "l fell silent: n claims")
			n.Ready()
			term := MakeTerm(1, 100, NodeTag("l"))
			beats := 5 + uint64(n.cfg.Misses) + tc.ahead
			n.Step(now, Message{Type: Query, Cluster: "test", From: "f", Incarnation: 3, Seq: 1, Flags: FlagRejected,
				Term: term, Leader: "l", Heard: Evidence{Term: term, Beat: beats}})
			if tc.givesUp {
				assert.Equal(t, election.Follower, n.Status().Role, "rejected: gives its claim up")
				assert.Equal(t, uint64(1), n.Stats().Rejected)
			} else {
				assert.Equal(t, election.Candidate, n.Status().Role, "it hears l as well as f does")
				assert.Zero(t, n.Stats().Rejected)
			}
		})
	}
}

// The new term must not be stale: below a leader term this follower knows
// (a rival it ignored), its leader's new term is not taken up, as no
// leader older than one known is followed; its claim will go above both.
func TestFollowerDoesNotTakeUpItsLeadersNewTermBelowAKnownOne(t *testing.T) {
	f := newTestNode(t)
	now := t0
	for seq := uint64(1); seq <= 3; seq++ {
		now = now.Add(f.cfg.Interval)
		f.Step(now, beat("l", 7, seq, 1))
	}
	f.Step(now, beat("r", 9, 1, 5)) // a rival of round 5, no evidence: ignored
	require.Equal(t, "l", f.Status().Leader.ID)
	f.Step(now.Add(f.cfg.Interval), beat("l", 7, 4, 2))
	assert.Equal(t, MakeTerm(1, 100, NodeTag("l")), f.Status().Leader.Term, "round 2 is older than round 5")
}
