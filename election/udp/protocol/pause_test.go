package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// TestPausedFollowerRelistens: a follower whose process was paused longer
// than the suspicion timeout does not suspect its leader the moment it
// runs again: the leader's heartbeats may be queued behind the pause. It
// listens one more interval, and a heartbeat then keeps it following
// without any suspicion or claim.
func TestPausedFollowerRelistens(t *testing.T) {
	n := newTestNode(t)
	hb := beat("l", 1, 1, 1)
	hb.Beat = 1
	now := t0.Add(time.Millisecond)
	n.Step(now, hb)
	require.Equal(t, "l", n.Status().Leader.ID)
	n.Ready()

	resumed := now.Add(5 * time.Second) // paused (or suspended) for 5 s
	n.Tick(resumed)
	assert.Equal(t, uint64(1), n.Stats().Pauses)
	assert.Equal(t, "l", n.Status().Leader.ID, "still following right after the pause")
	assert.False(t, n.NextTick().Before(resumed.Add(n.t.Relisten)), "listens one interval before suspecting")

	hb.Seq, hb.Beat = 2, 2
	n.Step(resumed.Add(n.t.Interval/2), hb)
	assert.Equal(t, "l", n.Status().Leader.ID)
	assert.Zero(t, n.Stats().Suspicions, "a queued heartbeat after a pause is no reason to suspect")
	assert.Empty(t, sentOf(n, Claim))
}

// TestLeaderSilentForSuspectStepsDown: a leader whose next call comes
// Misses intervals or more after its last heartbeat (a pause, a host
// suspend) may have been replaced by now — without quorum nothing says
// otherwise — so it steps down before it sends anything as leader and
// asks who leads. A shorter pause, which no follower can have taken for a
// dead leader, keeps the leadership after one claim window of listening.
func TestLeaderSilentForSuspectStepsDown(t *testing.T) {
	tm := DefaultLANConfig().Timings()
	tests := []struct {
		name      string
		silent    time.Duration // since the leader's last heartbeat
		stillLead bool
	}{
		{"detected pause shorter than Suspect", tm.Suspect - time.Millisecond, true},
		{"exactly Suspect", tm.Suspect, false},
		{"host suspend of 5 s", 5 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, now := alone(t, "l", 100, 1)
			term := l.Status().Leader.Term
			require.True(t, l.CanActAsLeader(now))
			woke := now.Add(tt.silent)
			assert.False(t, l.CanActAsLeader(woke), "overdue: paused and not noticed yet")
			l.Tick(woke)
			out := l.Ready()
			require.Equal(t, uint64(1), l.Stats().Pauses, "detected as a pause")
			assert.False(t, l.CanActAsLeader(woke))
			var beats, queries int
			for _, e := range out {
				switch e.Msg.Type {
				case Heartbeat:
					beats++
				case Query:
					queries++
					assert.Empty(t, e.To, "asks everyone")
				}
			}
			assert.Equal(t, 1, queries, "asks who leads")
			if tt.stillLead {
				assert.Equal(t, election.Leader, l.Status().Role)
				assert.Equal(t, 1, beats, "reasserts its term")
				later := woke.Add(tm.ClaimWindow)
				l.Tick(later)
				assert.True(t, l.CanActAsLeader(later), "nobody objected within a claim window")
				assert.Equal(t, term, l.Status().Leader.Term)
				assert.Zero(t, l.Stats().PausedStepDown)
				return
			}
			assert.Equal(t, election.Follower, l.Status().Role, "steps down at once")
			assert.False(t, l.Status().Leader.Known())
			assert.Zero(t, beats, "no heartbeat of the old term after the silence")
			assert.Equal(t, uint64(1), l.Stats().SteppedDown)
			assert.Equal(t, uint64(1), l.Stats().PausedStepDown, "the pause ended the leadership")
			assert.False(t, l.NextTick().Before(woke.Add(tm.YieldWait)), "listens a claim window and an interval before claiming")
		})
	}
}

// TestPauseThenBetterLeaderIsNotAPausedStepDown: a leader that noticed a
// short pause and went on leading, then gives way to a better leader (a
// healed partition's), stepped down because of that leader, not the
// pause: the step-down reason (PausedStepDown against SteppedDown) must
// say so.
func TestPauseThenBetterLeaderIsNotAPausedStepDown(t *testing.T) {
	tm := DefaultLANConfig().Timings()
	l, now := alone(t, "l", 100, 1)
	woke := now.Add(tm.Suspect - time.Millisecond)
	l.Tick(woke)
	later := woke.Add(tm.ClaimWindow)
	l.Tick(later)
	require.True(t, l.CanActAsLeader(later), "a short pause: still leading")
	require.Equal(t, uint64(1), l.Stats().Pauses)

	better := beat("z", 1, 1, TermRound(l.Status().Leader.Term)+1)
	better.Beat = 1
	better.Heard = Evidence{Term: l.Status().Leader.Term, Beat: 1}
	l.Step(later.Add(time.Millisecond), better)
	require.Equal(t, election.Follower, l.Status().Role, "gave way to the better leader")
	assert.Equal(t, uint64(1), l.Stats().SteppedDown)
	assert.Zero(t, l.Stats().PausedStepDown, "the pause did not end the leadership")
}
