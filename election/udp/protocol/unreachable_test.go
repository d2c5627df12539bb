package protocol

import (
	"slices"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claimOrder returns the followers of nw's only leader, best claimant
// first (priority, then NodeTag, then id: the order of their terms).
func claimOrder(t *testing.T, nw *net) (leader string, term uint64, order []string) {
	t.Helper()
	ls := nw.leaders()
	require.Len(t, ls, 1)
	leader = ls[0]
	term = nw.nodes[leader].Status().Leader.Term
	for id := range nw.nodes {
		if id != leader {
			order = append(order, id)
		}
	}
	slices.SortFunc(order, func(a, b string) int {
		na, nb := nw.nodes[a], nw.nodes[b]
		if claimsAhead(na.cfg.Priority, na.tag, a, nb.cfg.Priority, nb.tag, b) {
			return -1
		}
		return 1
	})
	return leader, term, order
}

// TestUnreachableRanksClaims: followers told at the same instant that the
// leader's process is gone claim by rank, not by a random draw: the best
// one claims in the same call, each other one RankStep later per better
// peer, so the best one's claim reaches them first.
func TestUnreachableRanksClaims(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 100, "b": 100, "c": 100, "d": 100, "e": 50})
	nw.run(2 * time.Second)
	leader, term, order := claimOrder(t, nw)
	step := nw.nodes[leader].t.RankStep
	require.Positive(t, step)
	for rank, id := range order {
		n := nw.nodes[id]
		n.LeaderUnreachable(nw.now, leader, term)
		if rank == 0 {
			assert.Equal(t, election.Candidate, n.Status().Role, "the best follower claims at once")
			msgs := n.Ready()
			require.NotEmpty(t, msgs)
			assert.Equal(t, Claim, msgs[len(msgs)-1].Msg.Type)
			continue
		}
		assert.Equal(t, backingOff, n.fstate, "%s (rank %d)", id, rank)
		assert.Equal(t, nw.now.Add(time.Duration(rank)*step), n.waitUntil, "%s (rank %d)", id, rank)
		assert.Empty(t, n.Ready(), "%s (rank %d) must not claim yet", id, rank)
	}
	// The lowest priority ranks last whatever its id.
	assert.Equal(t, "e", order[len(order)-1])
}

// TestUnreachableRankIgnoresDeadLeaderAndResigned: the dead leader and
// peers that resigned do not push a follower back.
func TestUnreachableRankIgnoresDeadLeaderAndResigned(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 100, "b": 100, "c": 100})
	nw.run(2 * time.Second)
	leader, _, order := claimOrder(t, nw)
	second := nw.nodes[order[1]]
	second.peers[order[0]].gone = true // as if it had resigned
	second.peers[leader].priority = 255
	assert.Zero(t, second.rankWait(leader))
}

// TestUnreachableRankCapped: however many better peers, the wait is at
// most BackoffMax.
func TestUnreachableRankCapped(t *testing.T) {
	n, err := NewNode(testConfig("a", 1, 1), t0)
	require.NoError(t, err)
	for i := range 100 {
		n.peers[string(rune('A'+i))] = &peer{priority: 200}
	}
	assert.Equal(t, n.t.BackoffMax, n.rankWait("x"))
}

// TestUnreachableQuorumKeepsRandomBackoff: in quorum mode the follower's
// promise to the dead leader holds its claim back; it backs off as before
// and claims nothing in the call.
func TestUnreachableQuorumKeepsRandomBackoff(t *testing.T) {
	c := testConfig("a", 100, 1)
	c.ClusterSize = 3
	n, err := NewNode(c, t0)
	require.NoError(t, err)
	now := t0.Add(time.Second)
	n.Step(now, Message{Type: Heartbeat, Cluster: "test", From: "z", Incarnation: 1, Seq: 1, Term: MakeTerm(1, 100, NodeTag("z")), Leader: "z", Beat: 1, Addr: "addr-z"})
	require.Equal(t, "z", n.Status().Leader.ID)
	n.Ready()
	at := now.Add(time.Millisecond)
	n.LeaderUnreachable(at, "z", MakeTerm(1, 100, NodeTag("z")))
	assert.Equal(t, uint64(1), n.Stats().LeaderUnreachable)
	assert.Equal(t, election.Follower, n.Status().Role)
	assert.Equal(t, backingOff, n.fstate)
	// heartbeat.Backoff at priority 100: a skew of about 0.3 BackoffMax
	// plus a draw below BackoffMax/2.
	wait := n.waitUntil.Sub(at)
	assert.GreaterOrEqual(t, wait, n.t.BackoffMax/4, "the priority skew of the randomized backoff")
	assert.LessOrEqual(t, wait, n.t.BackoffMax)
	for _, e := range n.Ready() {
		assert.NotEqual(t, Claim, e.Msg.Type)
	}
}

// TestStartingNodeLearnsEarlierFollowers: followers answer a starting
// node's QUERY with a presence report, so it knows the followers that
// started before it (which rankWait needs), not only the leader.
func TestStartingNodeLearnsEarlierFollowers(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 100, "b": 100, "c": 100})
	nw.run(2 * time.Second)
	late, err := NewNode(testConfig("d", 100, 9), nw.now)
	require.NoError(t, err)
	nw.nodes["d"] = late
	nw.pump()
	for id := range nw.nodes {
		if id != "d" {
			assert.Contains(t, late.peers, id)
		}
	}
	// Only once per incarnation: the next query (a leader's after a
	// pause, say) is not answered with reports.
	for id, n := range nw.nodes {
		if id != "d" {
			n.Ready()
		}
	}
	late.emit("", Message{Type: Query})
	nw.pump()
	for id, n := range nw.nodes {
		if id != "d" {
			assert.Empty(t, n.Ready(), id)
		}
	}
}

func TestClaimsAheadMatchesTermOrder(t *testing.T) {
	ids := []string{"a", "b", "c", "node-1", "node-2", "n00", "n01"}
	for _, x := range ids {
		for _, y := range ids {
			if x == y {
				continue
			}
			for _, p := range [][2]uint8{{100, 100}, {100, 200}, {200, 100}} {
				tx, ty := MakeTerm(5, p[0], NodeTag(x)), MakeTerm(5, p[1], NodeTag(y))
				assert.Equal(t, better(tx, p[0], x, ty, p[1], y), claimsAhead(p[0], NodeTag(x), x, p[1], NodeTag(y), y), "%s/%d vs %s/%d", x, p[0], y, p[1])
			}
		}
	}
}

// followBeats makes n follow leader "z" and delivers heartbeats whose gaps
// are Interval plus late[i], returning the arrival of the last one.
func followBeats(t *testing.T, n *Node, start time.Time, late []time.Duration) time.Time {
	t.Helper()
	term := MakeTerm(1, 100, NodeTag("z"))
	at := start
	for i := range len(late) + 1 {
		if i > 0 {
			at = at.Add(n.cfg.Interval + late[i-1])
		}
		n.Step(at, Message{Type: Heartbeat, Cluster: "test", From: "z", Incarnation: 1, Seq: uint64(i + 1), Term: term, Leader: "z", Beat: uint64(i + 1), Addr: "addr-z"})
	}
	require.Equal(t, "z", n.Status().Leader.ID)
	return at
}

// TestProbeGraceFollowsHeartbeatLateness: the probe goes out
// MinProbeGrace after the next heartbeat was due when heartbeats come on
// time, later when they came late recently, never later than ProbeGrace;
// a late burst is forgotten within a few hundred heartbeats.
func TestProbeGraceFollowsHeartbeatLateness(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name string
		late []time.Duration
		want time.Duration // grace after the last heartbeat
	}{
		{"on time", []time.Duration{0, 0, 0, 0}, MinProbeGrace},
		{"early ones do not lower it", []time.Duration{-5 * ms, -5 * ms}, MinProbeGrace},
		{"one late by 3 ms just now", []time.Duration{0, 0, 3 * ms}, 3*ms + MinProbeGrace},
		{"decays by 1/32 per heartbeat", []time.Duration{3200 * time.Microsecond, 0}, 3100*time.Microsecond + MinProbeGrace},
		{"capped", []time.Duration{time.Second}, ProbeGrace(200 * ms)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := NewNode(testConfig("a", 100, 1), t0)
			require.NoError(t, err)
			last := followBeats(t, n, t0.Add(time.Second), tc.late)
			assert.Equal(t, last.Add(n.cfg.Interval+tc.want), n.ProbeAt())
		})
	}
	t.Run("forgotten", func(t *testing.T) {
		n, err := NewNode(testConfig("a", 100, 1), t0)
		require.NoError(t, err)
		late := make([]time.Duration, 300)
		late[0] = time.Second
		last := followBeats(t, n, t0.Add(time.Second), late)
		assert.Less(t, n.ProbeAt().Sub(last.Add(n.cfg.Interval)), MinProbeGrace+100*time.Microsecond)
	})
	t.Run("a lost heartbeat is no lateness", func(t *testing.T) {
		n, err := NewNode(testConfig("a", 100, 1), t0)
		require.NoError(t, err)
		last := followBeats(t, n, t0.Add(time.Second), []time.Duration{0})
		term := MakeTerm(1, 100, NodeTag("z"))
		last = last.Add(2 * n.cfg.Interval) // beat 3 lost
		n.Step(last, Message{Type: Heartbeat, Cluster: "test", From: "z", Incarnation: 1, Seq: 4, Term: term, Leader: "z", Beat: 4, Addr: "addr-z"})
		assert.Equal(t, last.Add(n.cfg.Interval+MinProbeGrace), n.ProbeAt())
	})
}

// TestSilenceWaitsGraceThenRank: a follower whose leader fell silent
// suspects when the Misses-th missed heartbeat was due, waits the probe
// grace for it plus its rank, and a heartbeat arriving in the grace
// cancels the suspicion without a claim.
func TestSilenceWaitsGraceThenRank(t *testing.T) {
	n, err := NewNode(testConfig("a", 100, 1), t0)
	require.NoError(t, err)
	last := followBeats(t, n, t0.Add(time.Second), []time.Duration{0, 0})
	n.leader.Addr = ""                          // no address to probe: silence alone decides
	n.Tick(last)                                // takes up the schedule without probes
	n.peers["zz-better"] = &peer{priority: 200} // one peer whose claim beats ours
	n.Ready()
	deadline := n.NextTick()
	require.Equal(t, last.Add(time.Duration(n.cfg.Misses)*n.cfg.Interval), deadline)
	n.Tick(deadline)
	require.Equal(t, backingOff, n.fstate)
	assert.Equal(t, deadline.Add(MinProbeGrace+n.t.RankStep), n.waitUntil)
	// The due heartbeat, late but within the grace: back to following.
	term := MakeTerm(1, 100, NodeTag("z"))
	n.Step(deadline.Add(MinProbeGrace/2), Message{Type: Heartbeat, Cluster: "test", From: "z", Incarnation: 1, Seq: 10, Term: term, Leader: "z", Beat: 6, Addr: "addr-z"})
	assert.Equal(t, "z", n.Status().Leader.ID)
	for _, e := range n.Ready() {
		assert.NotEqual(t, Claim, e.Msg.Type)
	}
}

// TestSilenceQuorumKeepsRandomBackoff: in quorum mode simultaneous claims
// would split the votes; suspicion draws the randomized backoff.
func TestSilenceQuorumKeepsRandomBackoff(t *testing.T) {
	c := testConfig("a", 100, 1)
	c.ClusterSize = 3
	n, err := NewNode(c, t0)
	require.NoError(t, err)
	followBeats(t, n, t0.Add(time.Second), []time.Duration{0})
	deadline := n.NextTick()
	n.Tick(deadline)
	require.Equal(t, backingOff, n.fstate)
	assert.GreaterOrEqual(t, n.waitUntil.Sub(deadline), n.t.BackoffMax/4, "the priority skew of the randomized backoff")
}

// TestLeaderAnswersClaimRightAfterItsHeartbeat: a claim that comes just
// after a scheduled heartbeat (its sender lost that heartbeat) is answered
// at once; answers alone are limited to one per quarter claim window.
func TestLeaderAnswersClaimRightAfterItsHeartbeat(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 100, "b": 100})
	nw.run(2 * time.Second)
	ls := nw.leaders()
	require.Len(t, ls, 1)
	lead := nw.nodes[ls[0]]
	at := lead.NextTick()
	lead.Tick(at) // the scheduled heartbeat
	lead.Ready()
	claim := func(seq uint64, d time.Duration) []Envelope {
		lead.Step(at.Add(d), Message{Type: Claim, Cluster: "test", From: "x", Incarnation: 1, Seq: seq, Term: MakeTerm(TermRound(lead.Status().Leader.Term)+1, 100, NodeTag("x")), Addr: "addr-x"})
		return lead.Ready()
	}
	out := claim(1, time.Millisecond)
	require.Len(t, out, 1, "answered although a heartbeat just left")
	assert.Equal(t, Heartbeat, out[0].Msg.Type)
	assert.Empty(t, claim(2, 2*time.Millisecond), "a second answer within W/4 of the first")
	assert.Len(t, claim(3, time.Millisecond+lead.cfg.ClaimWindow/4), 1)
}
