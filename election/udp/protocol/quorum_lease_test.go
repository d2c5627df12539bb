package protocol

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quorumLeader returns node "a" of a 3-node quorum cluster elected with
// one vote (from "b", promising as much as a), and when its claim was
// sent.
func quorumLeader(t *testing.T, promiseMisses int) (*Node, time.Time) {
	t.Helper()
	return leaderWithVotes(t, 3, promiseMisses, granted{"b", 0})
}

// TestLeaderMayNotActPastItsLease: without acks the lease ends Lease after
// the claim was sent, and CanActAsLeader says so at once — also when the
// node has not ticked yet (the job runner asks from its own goroutine,
// between ticks).
func TestLeaderMayNotActPastItsLease(t *testing.T) {
	a, sentAt := quorumLeader(t, 10) // lease 1.6 s: longer than the pause rule's reach
	end := sentAt.Add(a.t.Lease)
	for next := a.NextTick(); next.Before(end); next = a.NextTick() {
		a.Tick(next) // heartbeats nobody acks
		a.Ready()
	}
	require.Equal(t, election.Leader, a.Status().Role)
	assert.True(t, a.CanActAsLeader(end.Add(-time.Millisecond)))
	assert.False(t, a.CanActAsLeader(end), "acting on a lease that ran out")
	a.Tick(end)
	assert.NotEqual(t, election.Leader, a.Status().Role, "steps down when the lease runs out")
}

// TestLeaseHasDriftMargin: the lease must end before any voter's promise
// even when the leader's clock runs 20 % slower than the voter's (the
// documented bound): Lease × 1.2 ≤ Promise, for every PromiseMisses.
func TestLeaseHasDriftMargin(t *testing.T) {
	for _, pm := range []int{3, 4, 10, 1000} {
		c := testConfig("a", 100, 1)
		c.ClusterSize, c.PromiseMisses = 3, pm
		tm := c.Timings()
		assert.LessOrEqual(t, tm.Lease*6/5, tm.Promise, "PromiseMisses %d: lease %v, promise %v", pm, tm.Lease, tm.Promise)
	}
	a, sentAt := quorumLeader(t, 3)
	assert.Equal(t, sentAt.Add(a.t.Lease), a.q.leaseEnd(), "the lease runs from the claim's send time")
	assert.Less(t, a.t.Lease, a.t.Promise)
}

// TestLostClaimIsRetransmitted: a claim is sent again halfway through its
// window, so one lost packet does not lose the election: a voter that
// hears only the second copy still elects the candidate.
func TestLostClaimIsRetransmitted(t *testing.T) {
	a := quorumNode(t, "a", 3, 1)
	for a.Status().Role != election.Candidate {
		a.Tick(a.NextTick())
	}
	require.Len(t, sentOf(a, Claim), 1) // lost
	a.Tick(a.NextTick())
	again := sentOf(a, Claim)
	require.Len(t, again, 1, "the claim is resent within its window")
	assert.Equal(t, election.Candidate, a.Status().Role)

	b := quorumNode(t, "b", 3, 2)
	b.Step(a.now.Add(b.t.Promise), again[0].Msg) // b's start-up promise is long over
	votes := sentOf(b, Vote)
	require.Len(t, votes, 1)
	a.Step(a.now, votes[0].Msg)
	a.Tick(a.NextTick())
	assert.Equal(t, election.Leader, a.Status().Role, "the resent claim won the vote")
}

// ackOf is b's ACK of heartbeat hb, sent as b's message number seq.
func ackOf(hb Message, from string, seq uint64) Message {
	var p [8]byte
	binary.BigEndian.PutUint64(p[:], hb.Seq)
	return Message{Type: Ack, Cluster: "test", From: from, Incarnation: 1, Seq: seq, Term: hb.Term, Leader: hb.Leader, Payload: p[:]}
}

// TestCommittedOnlyWhileTheLeaseHolds: the gate that lets a job start
// (Committed) opens only while the lease holds, asked at the moment it
// opens — also between ticks, when the leader has not stepped down yet.
func TestCommittedOnlyWhileTheLeaseHolds(t *testing.T) {
	a, _ := quorumLeader(t, 10) // lease 1.6 s: longer than the pause rule's reach
	at := a.now
	a.Publish(at, []byte("run I"))
	ver := a.PayloadVersion()
	hb := sentOf(a, Heartbeat)
	require.Len(t, hb, 1)
	a.Step(at.Add(time.Millisecond), ackOf(hb[0].Msg, "b", 100))
	assert.True(t, a.Committed(at.Add(time.Millisecond), ver), "2 of 3 hold it, the lease holds")
	end := at.Add(a.t.Lease)
	for next := a.NextTick(); next.Before(end); next = a.NextTick() {
		a.Tick(next) // heartbeats nobody acks
		a.Ready()
	}
	require.Equal(t, election.Leader, a.Status().Role, "no tick at the lease's end yet")
	assert.True(t, a.Committed(end.Add(-time.Millisecond), ver))
	assert.False(t, a.Committed(end, ver), "the lease ran out: a job must not start on it")
}

// TestStalledLeaderCommitsNothingOnAQueuedAck is issue 22's hole 1 in the
// core: a leader publishes an instant and stalls past its lease; woken, it
// handles the ACK that waited in its socket buffer before its timer's
// Tick. The ACK is of the heartbeat that carried the instant, so a
// majority holds it — but the lease ended long ago, a successor may lead,
// and the gate must stay shut.
func TestStalledLeaderCommitsNothingOnAQueuedAck(t *testing.T) {
	a, _ := quorumLeader(t, 3)
	at := a.now
	a.Publish(at, []byte("run I"))
	ver := a.PayloadVersion()
	hb := sentOf(a, Heartbeat)
	require.Len(t, hb, 1)
	woke := at.Add(a.t.Promise + a.t.Gather) // a successor was elected and gathered meanwhile
	a.Step(woke, ackOf(hb[0].Msg, "b", 100))
	require.Equal(t, election.Leader, a.Status().Role, "no tick yet: it still thinks it leads")
	assert.False(t, a.Committed(woke, ver), "the stalled leader's gate opens on an ACK its lease no longer covers")
}
