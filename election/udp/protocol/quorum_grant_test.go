package protocol

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collidingIDs share priority-free NodeTag, so at equal priority and round
// they claim the very same term.
const collideA, collideB = "node-267", "node-322"

func TestCollidingIDsShareATag(t *testing.T) {
	require.Equal(t, NodeTag(collideA), NodeTag(collideB), "the regression tests below need a tag collision")
}

// sentTypes returns the messages n queued, by type.
func sentOf(n *Node, typ Type) []Envelope {
	var out []Envelope
	for _, e := range n.Ready() {
		if e.Msg.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestOneVotePerTermBoundToCandidate reproduces the double vote: two
// equal-priority nodes whose ids collide on the tag claim identical terms;
// a voter must vote for only one of them.
func TestOneVotePerTermBoundToCandidate(t *testing.T) {
	v := quorumNode(t, "v", 3, 1)
	now := t0.Add(v.t.Promise + time.Millisecond) // start-up promise over
	ca := claim(collideA, 100, 1, 1)
	cb := claim(collideB, 100, 1, 1)
	require.Equal(t, ca.Term, cb.Term)

	v.Step(now, ca)
	votes := sentOf(v, Vote)
	require.Len(t, votes, 1)
	assert.Equal(t, collideA, votes[0].To)

	v.Step(now.Add(time.Millisecond), cb)
	assert.Empty(t, sentOf(v, Vote), "a second vote in the same term, for another candidate, elects two leaders")
	assert.Equal(t, uint64(1), v.Stats().VotesRefused)

	// The same candidate's retransmitted claim is voted for again (its
	// first vote may have been lost).
	ca.Seq = 2
	v.Step(now.Add(2*time.Millisecond), ca)
	assert.Len(t, sentOf(v, Vote), 1)
}

// TestStartupPromiseCoversAcks: a restarted node may have promised a newer
// leader in its previous life; it must not renew anyone's lease by ACKing
// while its start-up promise is in force.
func TestStartupPromiseCoversAcks(t *testing.T) {
	v := quorumNode(t, "v", 3, 1)
	hb := beat("old", 1, 1, 1)
	v.Step(t0.Add(time.Millisecond), hb)
	assert.Empty(t, sentOf(v, Ack), "no ACK while the start-up promise is in force")

	hb.Seq = 2
	after := t0.Add(v.t.Promise)
	v.Step(after, hb)
	assert.Len(t, sentOf(v, Ack), 1, "acks once the start-up promise has run out")
}

// TestAckBoundToLeader: a follower that acked one leader of term T does not
// ack another node claiming to lead the same term T (a tag collision).
func TestAckBoundToLeader(t *testing.T) {
	v := quorumNode(t, "v", 3, 1)
	now := t0.Add(v.t.Promise)
	a := beat(collideA, 1, 1, 1)
	b := beat(collideB, 1, 1, 1)
	require.Equal(t, a.Term, b.Term)
	v.Step(now, a)
	require.Len(t, sentOf(v, Ack), 1)
	v.Step(now.Add(time.Millisecond), b)
	assert.Empty(t, sentOf(v, Ack), "acked two leaders of one term")
}

// TestTagCollisionHigherIDWins: two equal-priority candidates whose ids
// collide on the tag claim the same term; the higher node id wins on both
// sides, so exactly one of them leads it.
func TestTagCollisionHigherIDWins(t *testing.T) {
	candidate := func(id string) *Node {
		n, err := NewNode(testConfig(id, 100, 1), t0)
		require.NoError(t, err)
		for n.Status().Role != election.Candidate {
			n.Tick(n.NextTick())
		}
		n.Ready()
		return n
	}
	lo, hi := candidate(collideA), candidate(collideB)
	require.Equal(t, lo.claimTerm, hi.claimTerm, "same round, priority and tag: same term")

	lo.Step(lo.now, claim(collideB, 100, 1, 1))
	assert.Equal(t, election.Follower, lo.Status().Role, "%s yields to %s's claim of the same term", collideA, collideB)

	hi.Step(hi.now, claim(collideA, 100, 1, 1))
	assert.Equal(t, election.Candidate, hi.Status().Role, "%s keeps its claim", collideB)
	hi.Tick(hi.NextTick())
	hi.Tick(hi.NextTick())
	assert.Equal(t, election.Leader, hi.Status().Role)
}
