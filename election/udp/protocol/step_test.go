package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newTestNode(t *testing.T) *Node {
	t.Helper()
	n, err := NewNode(testConfig("me", 100, 1), t0)
	require.NoError(t, err)
	n.Ready()
	return n
}

func beat(from string, inc, seq uint64, round uint64) Message {
	return Message{Type: Heartbeat, Cluster: "test", From: from, Leader: from, Incarnation: inc, Seq: seq, Beat: seq,
		Term: MakeTerm(round, 100, NodeTag(from)), Priority: 100}
}

func TestStepDropsBadMessages(t *testing.T) {
	tests := []struct {
		name   string
		msg    Message
		reason DropReason
	}{
		{"other cluster", Message{Type: Query, Cluster: "x", From: "p", Incarnation: 1, Seq: 1}, DropOtherCluster},
		{"empty from", Message{Type: Query, Cluster: "test", Incarnation: 1, Seq: 1}, DropMalformed},
		{"self echo", Message{Type: Query, Cluster: "test", From: "me", Incarnation: NewIncarnation(1000, 1), Seq: 1}, DropSelf},
		{"duplicate id", Message{Type: Query, Cluster: "test", From: "me", Incarnation: 5, Seq: 1}, DropDuplicateID},
		{"zero incarnation", Message{Type: Query, Cluster: "test", From: "p", Seq: 1}, DropMalformed},
		{"unknown type", Message{Type: 200, Cluster: "test", From: "p", Incarnation: 1, Seq: 1}, DropUnknownType},
		{"zero type", Message{Type: 0, Cluster: "test", From: "p", Incarnation: 1, Seq: 1}, DropUnknownType},
		{"vote", Message{Type: Vote, Cluster: "test", From: "p", Incarnation: 1, Seq: 1}, DropUnsupported},
		{"heartbeat leader mismatch", Message{Type: Heartbeat, Cluster: "test", From: "p", Leader: "q", Incarnation: 1, Seq: 1, Term: MakeTerm(1, 1, 1)}, DropMalformed},
		{"claim round zero", Message{Type: Claim, Cluster: "test", From: "p", Incarnation: 1, Seq: 1, Term: 5}, DropMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := newTestNode(t)
			n.Step(t0, tc.msg)
			assert.Equal(t, uint64(1), n.Stats().Dropped[tc.reason])
			assert.Empty(t, n.Stats().Received)
		})
	}
}

func TestReplayRules(t *testing.T) {
	n := newTestNode(t)
	now := t0.Add(10 * time.Millisecond)
	n.Step(now, beat("p", 10, 5, 1))
	require.Equal(t, "p", n.Status().Leader.ID)

	n.Step(now, beat("p", 10, 5, 1)) // duplicate
	n.Step(now, beat("p", 10, 4, 1)) // reordered
	assert.Equal(t, uint64(2), n.Stats().Dropped[DropStaleSeq])

	n.Step(now, beat("p", 11, 1, 1)) // restart: new incarnation, seq restarts
	assert.Equal(t, uint64(2), n.Stats().Received[Heartbeat])

	n.Step(now, beat("p", 9, 99, 1)) // older incarnation, peer not silent
	assert.Equal(t, uint64(1), n.Stats().Dropped[DropStaleIncarnation])
	n.Step(now, beat("p", 10, 5, 1)) // the previous incarnation's packet replayed
	assert.Equal(t, uint64(3), n.Stats().Dropped[DropStaleSeq])
	n.Step(now, beat("p", 10, 6, 1)) // the previous incarnation still sending: a duplicate id, heard
	assert.Equal(t, uint64(3), n.Stats().Received[Heartbeat])

	later := now.Add(n.cfg.ForgetPeerAfter)
	n.Step(later, beat("p", 9, 100, 1)) // silent long enough: accepted
	assert.Equal(t, uint64(4), n.Stats().Received[Heartbeat])
}

func TestPeerTableBounded(t *testing.T) {
	c := testConfig("me", 100, 1)
	c.MaxPeers = 4
	n, err := NewNode(c, t0)
	require.NoError(t, err)
	for i := range 50 {
		n.Step(t0.Add(time.Duration(i)), Message{Type: Query, Cluster: "test", From: string(rune('A' + i)), Incarnation: 1, Seq: 1})
	}
	assert.LessOrEqual(t, len(n.peers), 4)
}

func TestStepNeverPanicsOnGarbage(t *testing.T) {
	n := newTestNode(t)
	for i := range 2000 {
		m := Message{
			Type: Type(i % 9), Cluster: "test", From: string(rune('a' + i%5)),
			Incarnation: uint64(i % 3), Seq: uint64(i * 7 % 13), Term: uint64(i) * 0x9E3779B97F4A7C15,
			Priority: uint8(i), Flags: uint8(i), Leader: string(rune('a' + i%4)), Successor: "me",
		}
		if i%2 == 0 {
			m.Leader = m.From
		}
		assert.NotPanics(t, func() { n.Step(t0.Add(time.Duration(i)*time.Millisecond), m) })
		assert.NotPanics(t, func() { n.Tick(t0.Add(time.Duration(i)*time.Millisecond + 1)) })
	}
}

func TestTimeGoingBackIsClamped(t *testing.T) {
	n := newTestNode(t)
	n.Tick(t0.Add(time.Second))
	st := n.Status()
	n.Tick(t0) // monotonic clocks do not go back; a buggy caller must not break us
	assert.Equal(t, st.Role, n.Status().Role)
	assert.False(t, n.NextTick().Before(t0.Add(time.Second)))
}
