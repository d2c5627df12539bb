package protocol

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// granted is one peer's grant: its id and the promise its VOTE or ACK
// says (zero: not said).
type granted struct {
	from    string
	promise time.Duration
}

// leaderWithVotes returns node "a" of a size-node quorum cluster whose own
// promise is promiseMisses intervals, elected by the given votes, and when
// its claim was sent.
func leaderWithVotes(t *testing.T, size, promiseMisses int, votes ...granted) (*Node, time.Time) {
	t.Helper()
	c := testConfig("a", 100, 1)
	c.ClusterSize, c.PromiseMisses = size, promiseMisses
	return leaderOf(t, c, votes...)
}

// leaderOf returns node "a" with config c (quorum mode, NodeID "a"),
// elected by the given votes, and when its claim was sent.
func leaderOf(t *testing.T, c Config, votes ...granted) (*Node, time.Time) {
	t.Helper()
	a, err := NewNode(c, t0)
	require.NoError(t, err)
	a.Ready()
	for a.Status().Role != election.Candidate {
		a.Tick(a.NextTick())
	}
	cl := sentOf(a, Claim)
	require.Len(t, cl, 1)
	sentAt := a.now
	for i, v := range votes {
		a.Step(sentAt.Add(time.Millisecond), Message{Type: Vote, Cluster: "test", From: v.from, Incarnation: 1, Seq: uint64(i + 1),
			Term: cl[0].Msg.Term, Leader: "a", Priority: 100, Promise: v.promise})
	}
	for a.Status().Role == election.Candidate {
		a.Tick(a.NextTick())
	}
	require.Equal(t, election.Leader, a.Status().Role)
	a.Ready()
	return a, sentAt
}

// acks has a's heartbeat hb acked by each grant, a millisecond after it
// was sent at sentAt.
func acks(a *Node, hb Message, sentAt time.Time, gs ...granted) {
	for _, g := range gs {
		m := ackOf(hb, g.from, 1000+hb.Seq)
		m.Promise = g.promise
		a.Step(sentAt.Add(time.Millisecond), m)
	}
}

// leaseEndsAt ticks a (heartbeats nobody acks) up to just before end, and
// checks that it may act then and not at end.
func leaseEndsAt(t *testing.T, a *Node, end time.Time, msg string) {
	t.Helper()
	for next := a.NextTick(); next.Before(end.Add(-time.Millisecond)); next = a.NextTick() {
		a.Tick(next)
		a.Ready()
	}
	assert.True(t, a.CanActAsLeader(end.Add(-time.Millisecond)), "%s: lease over early", msg)
	assert.False(t, a.CanActAsLeader(end), "%s: acting past the promise it was granted", msg)
}

// TestLeaseFollowsThePromisesGranted is issue 22's hole 2 in the core: a
// leader whose own promise is 3 s (interval 200 ms, promise_misses 15)
// is elected and acked by a node that promises 600 ms (it runs with
// misses 3). That node may vote for a rival 600 ms after answering, so
// the lease must end 4/5 of 600 ms after the claim or heartbeat it
// answered — not 4/5 of 3 s.
func TestLeaseFollowsThePromisesGranted(t *testing.T) {
	a, sentAt := leaderWithVotes(t, 3, 15, granted{"b", 600 * time.Millisecond})
	leaseEndsAt(t, a, sentAt.Add(480*time.Millisecond), "from the claim")

	now := a.now
	a.Publish(now, []byte("x")) // a heartbeat
	hb := sentOf(a, Heartbeat)
	require.Len(t, hb, 1)
	acks(a, hb[0].Msg, now, granted{"b", 600 * time.Millisecond})
	leaseEndsAt(t, a, now.Add(480*time.Millisecond), "from the heartbeat acked")
}

// TestLeaseTakesTheBestMajority: of the majorities a leader's grants form,
// the one whose shortest promise lasts longest gives the lease.
func TestLeaseTakesTheBestMajority(t *testing.T) {
	long, short := 3*time.Second, 600*time.Millisecond
	a, sentAt := leaderWithVotes(t, 5, 15, granted{"b", long}, granted{"c", short})
	leaseEndsAt(t, a, sentAt.Add(480*time.Millisecond), "a, b, c: c's promise is the shortest")

	now := a.now
	a.Publish(now, []byte("x"))
	hb := sentOf(a, Heartbeat)
	require.Len(t, hb, 1)
	acks(a, hb[0].Msg, now, granted{"b", long}, granted{"c", short}, granted{"d", long})
	leaseEndsAt(t, a, now.Add(2400*time.Millisecond), "a, b, d all promise 3 s")
}

// TestLeaseCountsPromisesUpToOurLongest: a leader counts what its voters
// promise, longer than its own current promise too (they measured loss
// it did not: quorum_promise.go), but never more than the longest promise
// it would make itself (MaxMisses intervals, 2 s by default): a voter
// that promises more runs another timing.
func TestLeaseCountsPromisesUpToOurLongest(t *testing.T) {
	a, sentAt := leaderWithVotes(t, 3, 3, granted{"b", 1200 * time.Millisecond})
	require.Equal(t, 600*time.Millisecond, a.q.promise)
	leaseEndsAt(t, a, sentAt.Add(960*time.Millisecond), "b promised 1.2 s")

	a, sentAt = leaderWithVotes(t, 3, 3, granted{"b", 3 * time.Second})
	leaseEndsAt(t, a, sentAt.Add(1600*time.Millisecond), "b promised 3 s, a counts 2 s at most")
}

// TestUnsaidPromiseIsOurOwn: a node older than the promise field says
// nothing (zero); its grant counts with the leader's own promise, as all
// grants did before.
func TestUnsaidPromiseIsOurOwn(t *testing.T) {
	a, sentAt := leaderWithVotes(t, 3, 15, granted{"b", 0})
	leaseEndsAt(t, a, sentAt.Add(2400*time.Millisecond), "b says no promise")
}

// TestGrantsSayTheirPromise: every VOTE and ACK carries the promise it
// makes.
func TestGrantsSayTheirPromise(t *testing.T) {
	v := quorumNode(t, "v", 3, 1)
	now := t0.Add(v.t.Promise)
	v.Step(now, claim("m", 100, 1, 1))
	votes := sentOf(v, Vote)
	require.Len(t, votes, 1)
	assert.Equal(t, v.t.Promise, votes[0].Msg.Promise)
	v.Step(now.Add(time.Millisecond), beat("m", 1, 2, 1))
	as := sentOf(v, Ack)
	require.Len(t, as, 1)
	assert.Equal(t, v.t.Promise, as[0].Msg.Promise)
}

// TestLeaderKeepsThePaceOfTheShortestPromise: a leader whose majority
// granted shorter promises than its own heartbeats as often as those
// promises need — the shortest over Misses, as its own config assumes —
// or the lease they grant would run out between two heartbeats, and a
// rolling change that shortens the interval would have leaders flap. With
// promises as long as its own it keeps its interval.
func TestLeaderKeepsThePaceOfTheShortestPromise(t *testing.T) {
	fast := 120 * time.Millisecond // a node at 40 ms × 3
	a, _ := leaderWithVotes(t, 3, 3, granted{"b", fast})
	first := a.now
	a.Tick(a.NextTick())
	hb := sentOf(a, Heartbeat)
	require.Len(t, hb, 1)
	assert.Equal(t, first.Add(40*time.Millisecond), a.now, "the next heartbeat at the fast node's pace")
	acks(a, hb[0].Msg, a.now, granted{"b", fast})
	for range 20 {
		a.Tick(a.NextTick())
		hb = sentOf(a, Heartbeat)
		require.Len(t, hb, 1, "the lease the fast node grants is kept")
		acks(a, hb[0].Msg, a.now, granted{"b", fast})
	}
	assert.Equal(t, election.Leader, a.Status().Role)

	same, _ := leaderWithVotes(t, 3, 3, granted{"b", 600 * time.Millisecond})
	first = same.now
	same.Tick(same.NextTick())
	assert.Equal(t, first.Add(same.t.Interval), same.now, "equal timing: the interval")
}

// TestQuorumStatusNamesTheNodesWhoseTimingDiffers: the grants that promise
// other than this node's own promise are reported, by node, with the
// promise, until the node grants with the same promise again.
func TestQuorumStatusNamesTheNodesWhoseTimingDiffers(t *testing.T) {
	a, _ := leaderWithVotes(t, 5, 15, granted{"c", 600 * time.Millisecond}, granted{"b", 0}, granted{"d", 3 * time.Second})
	q := a.Quorum()
	assert.Equal(t, 3*time.Second, q.Promise)
	assert.Equal(t, []PeerPromise{{ID: "c", Promise: 600 * time.Millisecond}}, q.Differing, "b says none, d agrees")

	a.Publish(a.now, []byte("x"))
	hb := sentOf(a, Heartbeat)
	require.Len(t, hb, 1)
	acks(a, hb[0].Msg, a.now, granted{"c", 3 * time.Second}, granted{"e", 1200 * time.Millisecond})
	assert.Equal(t, []PeerPromise{{ID: "e", Promise: 1200 * time.Millisecond}}, a.Quorum().Differing, "c restarted with the same timing")

	// A grant to another node (broadcast: its sender did not know that
	// node's address) says nothing of what f would promise this one.
	other := ackOf(hb[0].Msg, "f", 2000)
	other.Leader, other.Promise = "z", 1400*time.Millisecond
	a.Step(a.now.Add(time.Millisecond), other)
	assert.Equal(t, []PeerPromise{{ID: "e", Promise: 1200 * time.Millisecond}}, a.Quorum().Differing, "f granted z, not a")
}

// TestHostilePromisesAreBounded: a grant's promise comes off the wire, so
// a node with a broken config (or a bug) can say anything that decodes.
// The largest duration counts as this node's longest promise, no more
// (and the lease arithmetic does not overflow); one shorter than a few
// claim windows does not make the leader heartbeat more often than every
// claim window.
func TestHostilePromisesAreBounded(t *testing.T) {
	a, sentAt := leaderWithVotes(t, 3, 3, granted{"b", time.Duration(math.MaxInt64)})
	leaseEndsAt(t, a, sentAt.Add(leaseOf(a.q.maxPromise)), "b promised forever")

	a, _ = leaderWithVotes(t, 3, 3, granted{"b", 15 * time.Millisecond})
	require.True(t, a.CanActAsLeader(a.now), "b's vote still supports the lease")
	assert.Equal(t, a.t.ClaimWindow, a.nextBeat.Sub(a.now), "the next heartbeat at most a claim window on")
}
