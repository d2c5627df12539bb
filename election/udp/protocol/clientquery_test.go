package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// clientQuery is what `lanleader who` sends: FlagClient, a nonce, padding.
func clientQuery(from string, nonce uint64) Message {
	return Message{Type: Query, Cluster: "test", From: from, Incarnation: 7, Seq: 1,
		Flags: FlagClient, Nonce: nonce, Payload: make([]byte, ClientQueryPad)}
}

func answers(out []Envelope) (n int) {
	for _, e := range out {
		if e.Msg.Type == Answer {
			n++
		}
	}
	return n
}

func TestClientQueryAnswerEchoesNonceWithoutPayload(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	l.SetPayload([]byte("the job ledger"))
	l.Step(now, clientQuery("who-1", 0xabc))
	out := l.Ready()
	require.Len(t, out, 1)
	a := out[0].Msg
	assert.Equal(t, Answer, a.Type)
	assert.Equal(t, "who-1", out[0].To)
	assert.Equal(t, uint64(0xabc), a.Nonce, "the answer echoes the query's nonce")
	assert.Empty(t, a.Payload, "a client does not need the ledger")
	assert.Equal(t, l.Status().Leader.Term, a.Term)
}

func TestClientQueryReplayIsDropped(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	q := clientQuery("who-1", 5)
	l.Step(now, q)
	require.Equal(t, 1, answers(l.Ready()))
	// A second later, the leader ticking meanwhile as its Run loop does
	// (left alone that long it would wake as from a pause and step down).
	later := now.Add(time.Second)
	for at := l.NextTick(); !at.After(later); at = l.NextTick() {
		l.Tick(at)
	}
	require.Equal(t, election.Leader, l.Status().Role)
	l.Step(later, q)
	assert.Equal(t, DropReplayedQuery, l.LastDrop())
	assert.Zero(t, answers(l.Ready()), "a captured query sent again gets nothing")
	q.Nonce = 6
	l.Step(later, q)
	assert.Equal(t, 1, answers(l.Ready()), "a new question from the same client is answered")
}

func TestClientQueryWithoutNonceOrPaddingIsDropped(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	q := clientQuery("who-1", 0)
	l.Step(now, q)
	assert.Equal(t, DropMalformed, l.LastDrop())
	q = clientQuery("who-2", 1)
	q.Payload = q.Payload[:ClientQueryPad-1]
	l.Step(now, q)
	assert.Equal(t, DropMalformed, l.LastDrop(), "an unpadded query could be answered with a larger packet")
	assert.Zero(t, answers(l.Ready()))
}

func TestClientQueriesAreRateLimited(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	for i := range 3 * clientBurst {
		l.Step(now, clientQuery("who", uint64(i+1)))
	}
	assert.Equal(t, clientBurst, answers(l.Ready()), "a burst costs at most clientBurst answers")
	assert.Equal(t, DropRateLimited, l.LastDrop())
	now = now.Add(10 * clientRefill)
	for i := range 20 {
		l.Step(now, clientQuery("who", uint64(1000+i)))
	}
	assert.Equal(t, 10, answers(l.Ready()), "the budget refills at one per clientRefill")
}

// Client traffic cannot touch the election: a client query with a huge
// term neither raises a follower's term nor stops a candidate's claim.
func TestClientQueryChangesNoElectionState(t *testing.T) {
	n := newTestNode(t)
	for n.Status().Role != election.Candidate {
		n.Tick(n.NextTick())
	}
	before := n.Status()
	q := clientQuery("who", 1)
	q.Term = MakeTerm(MaxRound, 255, 1)
	n.Step(n.now, q)
	assert.Equal(t, DropNotLeader, n.LastDrop())
	assert.Equal(t, before, n.Status(), "a client query changes nothing but an answer")
	assert.Empty(t, n.peers["who"])
}
