package protocol

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// restarted returns a quorum node of a 3-node cluster started at `at` from
// d, with nothing queued.
func restarted(t *testing.T, id string, d Durable, at time.Time) *Node {
	t.Helper()
	c := testConfig(id, 100, 2)
	c.ClusterSize = 3
	c.Resume = d
	n, err := NewNode(c, at)
	require.NoError(t, err)
	n.Ready()
	return n
}

// TestGrantBindingIsDurable: the binding is saved when it changes — the
// first ACK to a leader, a vote for another candidate — and not when an ACK
// renews it, which happens every heartbeat.
func TestGrantBindingIsDurable(t *testing.T) {
	v := quorumNode(t, "v", 3, 1)
	now := t0.Add(v.t.Promise)
	st0, _ := v.DurableVersion()
	hb := beat("l", 1, 1, 1)
	v.Step(now, hb)
	require.Len(t, sentOf(v, Ack), 1)
	assert.Equal(t, Grant{Term: hb.Term, To: "l", Promise: v.t.Promise}, v.Durable().Grant)
	st1, _ := v.DurableVersion()
	assert.NotEqual(t, st0, st1, "a new binding is saved before its ACK leaves")

	for i := range uint64(10) {
		hb.Seq, hb.Beat = 2+i, 2+i
		now = now.Add(v.cfg.Interval)
		v.Step(now, hb)
		require.Len(t, sentOf(v, Ack), 1)
	}
	st2, _ := v.DurableVersion()
	assert.Equal(t, st1, st2, "renewing the same binding is not a change")

	// The leader is gone; once the promise ran out v votes for another.
	now = now.Add(v.t.Promise)
	c := claim("m", 100, 2, 1)
	v.Step(now, c)
	require.Len(t, sentOf(v, Vote), 1)
	assert.Equal(t, Grant{Term: c.Term, To: "m", Promise: v.t.Promise}, v.Durable().Grant)
	st3, _ := v.DurableVersion()
	assert.NotEqual(t, st2, st3)
}

// TestResumedPromiseKeepsTheLeader: a follower restarted from its state
// file acks the leader it last acked at once, and votes or acks for nobody
// else until Promise after the restart, as a cold start does.
func TestResumedPromiseKeepsTheLeader(t *testing.T) {
	hb := beat("l", 1, 1, 5)
	d := Durable{Round: 5, MaxTerm: hb.Term, Grant: Grant{Term: hb.Term, To: "l"}}
	at := t0.Add(time.Hour)
	v := restarted(t, "v", d, at)
	want := d.Grant
	want.Promise = v.t.Promise // a file that says none: our own
	assert.Equal(t, want, v.Durable().Grant, "the binding is kept until another grant replaces it")

	// Another candidate's claim, higher, before the leader is heard: v
	// yields to it but may not vote.
	v.Step(at.Add(time.Millisecond), claim("m", 100, 6, 1))
	assert.Empty(t, sentOf(v, Vote), "a restarted node votes for another candidate within Promise")
	assert.Equal(t, uint64(1), v.Stats().VotesRefused)

	v.Step(at.Add(2*time.Millisecond), hb)
	assert.Len(t, sentOf(v, Ack), 1, "the leader granted before the restart is acked at once")

	// Another leader's heartbeat: followed, not acked.
	w := restarted(t, "w", d, at)
	w.Step(at.Add(time.Millisecond), beat("m", 1, 1, 7))
	assert.Equal(t, "m", w.Status().Leader.ID)
	assert.Empty(t, sentOf(w, Ack), "a restarted node acks another leader within Promise")
	assert.Equal(t, uint64(1), w.Stats().AcksRefused)

	// Once the start-up promise has run out, the others are answered.
	x := restarted(t, "x", d, at)
	x.Step(at.Add(x.t.Promise), claim("m", 100, 6, 1))
	assert.Len(t, sentOf(x, Vote), 1, "after Promise the restarted node votes as usual")
}

// TestResumedPromiseIsBoundToTerm: the resumed binding allows the same
// candidate at that term or later only; an older term of the same
// candidate is refused, and a binding that cannot be one (no candidate) is
// the cold start's promise to nobody.
func TestResumedPromiseIsBoundToTerm(t *testing.T) {
	at := t0.Add(time.Hour)
	old, cur := beat("l", 1, 1, 4), beat("l", 1, 2, 5)
	v := restarted(t, "v", Durable{Round: 5, MaxTerm: cur.Term, Grant: Grant{Term: cur.Term, To: "l"}}, at)
	v.Step(at, old)
	assert.Empty(t, sentOf(v, Ack), "an older term of the bound candidate")
	assert.Equal(t, uint64(1), v.Stats().AcksRefused)
	newer := claim("l", 100, 6, 3)
	v.Step(at.Add(time.Millisecond), newer)
	assert.Len(t, sentOf(v, Vote), 1, "a later term of the bound candidate")

	cold := restarted(t, "w", Durable{Round: 5, MaxTerm: cur.Term, Grant: Grant{Term: cur.Term}}, at)
	cold.Step(at, cur)
	assert.Empty(t, sentOf(cold, Ack), "no candidate: bound to nobody")
	assert.Equal(t, uint64(1), cold.Stats().AcksRefused)
}

// replayed is a node message from p, as captured on the wire.
func fromP(inc, seq uint64) Message {
	return Message{Type: Query, Cluster: "test", From: "p", Incarnation: inc, Seq: seq, Priority: 100}
}

// TestReplayTableSurvivesRestart: packets captured before the table was
// saved are dropped after a restart; packets sent after the save are
// accepted until the sender's next packet (the documented window); a
// genuinely restarted peer (higher incarnation) is accepted; a peer whose
// clock went back (lower incarnation) is accepted ForgetPeerAfter after
// the restart, not locked out for good.
func TestReplayTableSurvivesRestart(t *testing.T) {
	a := quorumNode(t, "a", 3, 1)
	const inc = 1 << 30
	now := t0
	for s := uint64(1); s <= 5; s++ {
		now = now.Add(time.Second)
		a.Step(now, fromP(inc, s))
		require.Empty(t, a.LastDrop())
	}
	d := a.Durable()
	require.Equal(t, []PeerSeq{{ID: "p", Incarnation: inc, Seq: 5}}, d.Peers)
	a.Step(now.Add(time.Second), fromP(inc, 6)) // after the save

	at := now.Add(time.Hour) // the restart; the new clock may read anything
	steps := []struct {
		name string
		dt   time.Duration
		m    Message
		want DropReason
	}{
		{"replay of a saved packet", 0, fromP(inc, 3), DropStaleSeq},
		{"replay of the newest saved packet", 0, fromP(inc, 5), DropStaleSeq},
		{"older incarnation at once", 0, fromP(inc-1, 99), DropStaleIncarnation},
		{"sent after the save: the window", 0, fromP(inc, 6), ""},
		{"the window closes with the sender's next packet", 0, fromP(inc, 6), DropStaleSeq},
		{"a real next packet", 0, fromP(inc, 7), ""},
	}
	b := restarted(t, "a", d, at)
	for _, s := range steps {
		b.Step(at.Add(s.dt), s.m)
		assert.Equal(t, s.want, b.LastDrop(), s.name)
	}

	// A genuinely restarted peer, whose first packet after our restart
	// carries a higher incarnation.
	c := restarted(t, "a", d, at)
	c.Step(at, fromP(inc+1, 1))
	assert.Empty(t, c.LastDrop(), "a restarted peer is accepted")

	// A peer whose clock went back across its restart: a lower
	// incarnation, accepted once it has been silent ForgetPeerAfter —
	// counted from our restart, since no time of the previous life holds.
	e := restarted(t, "a", d, at)
	e.Step(at.Add(e.cfg.ForgetPeerAfter-time.Millisecond), fromP(inc-1, 1))
	assert.Equal(t, DropStaleIncarnation, e.LastDrop())
	e.Step(at.Add(e.cfg.ForgetPeerAfter), fromP(inc-1, 2))
	assert.Empty(t, e.LastDrop(), "a peer whose clock went back is accepted after ForgetPeerAfter")
}

// TestResumedPeersAreOnlyAFloor: entries from the state file are not
// peers heard (status, quorum membership count, successor choice) until
// they send; the table keeps at most MaxPeers, the most recently heard.
func TestResumedPeersAreOnlyAFloor(t *testing.T) {
	var ps []PeerSeq
	for i := range 5 {
		ps = append(ps, PeerSeq{ID: fmt.Sprintf("p%d", i), Incarnation: 1 << 30, Seq: 10})
	}
	c := testConfig("a", 100, 1)
	c.ClusterSize = 3
	c.MaxPeers = 3
	c.Resume = Durable{Peers: append(ps, PeerSeq{ID: "a", Incarnation: 9, Seq: 9}, PeerSeq{ID: "bad"})}
	n, err := NewNode(c, t0)
	require.NoError(t, err)
	assert.Equal(t, ps[:3], n.Durable().Peers, "the MaxPeers most recent entries; self and invalid ones skipped")
	assert.Empty(t, n.Peers(t0), "not heard in this life")
	n.Tick(t0)
	assert.Equal(t, 1, n.Quorum().Heard, "only itself counts as heard")
	assert.Empty(t, n.successor())

	m := Message{Type: Query, Cluster: "test", From: "p1", Incarnation: 1 << 30, Seq: 11, Priority: 100}
	n.Step(t0.Add(time.Millisecond), m)
	require.Empty(t, n.LastDrop())
	assert.Equal(t, "p1", n.successor())
	assert.Len(t, n.Peers(t0.Add(time.Millisecond)), 1)
	assert.Equal(t, "p1", n.Durable().Peers[0].ID, "most recently heard first")
}

// TestRestartWithAShorterPromiseKeepsTheLongerOne: a follower that acked
// its leader promising 3 s restarts with a 600 ms promise (its interval
// shortened). Its previous life's promise is saved with the binding: it
// acks the leader at once, with 600 ms, and votes for nobody else until
// 3 s after the restart — the ack does not shorten that — and only then
// saves its own promise as the one to keep.
func TestRestartWithAShorterPromiseKeepsTheLongerOne(t *testing.T) {
	hb := beat("l", 1, 1, 5)
	d := Durable{Round: 5, MaxTerm: hb.Term, Grant: Grant{Term: hb.Term, To: "l", Promise: 3 * time.Second}}
	at := t0.Add(time.Hour)
	v := restarted(t, "v", d, at)
	require.Equal(t, 600*time.Millisecond, v.t.Promise)
	assert.Equal(t, d.Grant, v.Durable().Grant, "the longer promise is still the one to keep")

	v.Step(at.Add(time.Millisecond), hb)
	acked := sentOf(v, Ack)
	require.Len(t, acked, 1, "the leader granted before the restart is acked at once")
	assert.Equal(t, 600*time.Millisecond, acked[0].Msg.Promise)
	assert.Equal(t, 3*time.Second, v.Durable().Grant.Promise, "the ack promises less, the old promise still holds")

	rival := claim("m", 100, 6, 1).Term
	assert.False(t, v.q.mayGrant(at.Add(2*time.Second), rival, "m"), "may vote for a rival while the previous life's 3 s promise holds")
	later := at.Add(3 * time.Second)
	require.True(t, v.q.mayGrant(later, rival, "m"), "after the old promise the restarted node votes as usual")
	v.q.grant(later, rival, "m")
	assert.Equal(t, Grant{Term: rival, To: "m", Promise: 600 * time.Millisecond}, v.Durable().Grant)

	cold := restarted(t, "w", Durable{Grant: Grant{Promise: 3 * time.Second}}, at)
	assert.False(t, cold.q.mayGrant(at.Add(2*time.Second), rival, "m"), "a binding to nobody keeps the saved promise too")
	huge := restarted(t, "x", Durable{Grant: Grant{Promise: 1000 * time.Hour}}, at)
	assert.True(t, huge.q.mayGrant(at.Add(maxResumedPromise), rival, "m"), "a damaged promise is bounded")
}
