package protocol

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quorumNode returns a node of a size-node quorum cluster with a fixed
// promise (MaxMisses = Misses): its start-up promise lasts Promise. Tests
// of the adaptive promise build their own (quorum_adapt_test.go).
func quorumNode(t *testing.T, id string, size int, seed uint64) *Node {
	t.Helper()
	c := testConfig(id, 100, seed)
	c.ClusterSize = size
	c.MaxMisses = c.Misses
	n, err := NewNode(c, t0)
	require.NoError(t, err)
	n.Ready()
	return n
}

func TestQuorumConfig(t *testing.T) {
	c := testConfig("a", 1, 1)
	c.ClusterSize = 3
	c.Preempt = true
	assert.ErrorContains(t, c.Validate(), "Preempt")
	c.Preempt = false
	c.ClusterSize = -1
	assert.ErrorContains(t, c.Validate(), "ClusterSize")
}

func TestQuorumAloneNeverLeads(t *testing.T) {
	n := quorumNode(t, "a", 3, 1)
	end := t0.Add(10 * time.Second)
	for n.NextTick().Before(end) {
		n.Tick(n.NextTick())
		require.NotEqual(t, election.Leader, n.Status().Role, "one of three has no majority")
	}
	assert.Positive(t, n.Stats().QuorumFailed)
	assert.Equal(t, DropUnsupported, func() DropReason {
		m := testConfig("b", 1, 2)
		nq, err := NewNode(m, t0)
		require.NoError(t, err)
		nq.Step(t0, Message{Type: Vote, Cluster: "test", From: "x", Incarnation: 1, Seq: 1, Term: MakeTerm(1, 1, 1), Leader: "b"})
		for r := range nq.Stats().Dropped {
			return r
		}
		return ""
	}())
}

func TestQuorumOfOneLeads(t *testing.T) {
	n := quorumNode(t, "a", 1, 1)
	for range 10 {
		n.Tick(n.NextTick())
	}
	assert.Equal(t, election.Leader, n.Status().Role)
	assert.True(t, n.CanActAsLeader(n.now))
}

func TestQuorumVotesAndLease(t *testing.T) {
	a := quorumNode(t, "a", 3, 1)
	b := quorumNode(t, "b", 3, 2)
	// b waits out its start-up promise, then hears a's claim.
	for a.Status().Role != election.Candidate {
		a.Tick(a.NextTick())
	}
	out := a.Ready()
	cl := out[len(out)-1].Msg
	require.Equal(t, Claim, cl.Type)
	now := a.now
	require.False(t, now.Before(b.q.grantedUntil()), "start-up promise has run out by a's claim")
	b.Step(now, cl)
	votes := b.Ready()
	require.Len(t, votes, 1)
	assert.Equal(t, Vote, votes[0].Msg.Type)
	assert.Equal(t, "a", votes[0].To)

	// A rival's claim is refused while b's promise to a is in force.
	rival := claim("c", 200, TermRound(cl.Term)+1, 1)
	b.Step(now.Add(time.Millisecond), rival)
	assert.Empty(t, b.Ready())
	assert.Equal(t, uint64(1), b.Stats().VotesRefused)

	a.Step(now.Add(time.Millisecond), votes[0].Msg)
	require.Equal(t, election.Candidate, a.Status().Role, "the claim is decided when its window ends")
	a.Tick(a.NextTick())
	a.Ready()
	require.Equal(t, election.Candidate, a.Status().Role, "claim resent halfway")
	a.Tick(a.NextTick())
	require.Equal(t, election.Leader, a.Status().Role, "2 of 3 is a majority")
	assert.True(t, a.CanActAsLeader(a.now))

	// Without acks the lease runs out and a steps down.
	for a.Status().Role == election.Leader {
		a.Tick(a.NextTick())
		a.Ready()
	}
	assert.Equal(t, uint64(1), a.Stats().LeaseLost)
}
