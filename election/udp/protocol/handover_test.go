package protocol

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ledgers returns the payloads of the Ledger messages in es.
func ledgers(es []Envelope) []string {
	var ps []string
	for _, e := range es {
		if e.Msg.Type == Ledger {
			ps = append(ps, string(e.Msg.Payload))
		}
	}
	return ps
}

// A follower hands its payload to every new leadership it follows, at once
// and on each heartbeat for GatherWindow, then stops; the same leader's
// heartbeats after the window bring nothing.
func TestFollowerHandsItsLedgerToANewLeader(t *testing.T) {
	n := newTestNode(t)
	n.SetPayload([]byte("pool"))
	now := t0.Add(10 * time.Millisecond)
	n.Step(now, beat("l", 1, 1, 3))
	assert.Equal(t, []string{"pool"}, ledgers(n.Ready()), "at once on a new leadership")
	win := n.GatherWindow()
	require.Equal(t, 5*n.cfg.Interval, win, "default window")
	seq := uint64(2)
	sent := 1
	for at := now.Add(n.cfg.Interval); at.Before(now.Add(win)); at = at.Add(n.cfg.Interval) {
		n.Step(at, beat("l", 1, seq, 3))
		seq++
		sent += len(ledgers(n.Ready()))
	}
	assert.Equal(t, 5, sent, "once per heartbeat inside the window")
	n.Step(now.Add(win), beat("l", 1, seq, 3))
	assert.Empty(t, ledgers(n.Ready()), "not after the window")

	// A new leadership (a higher term, that hears l) opens a new window.
	m := beat("m", 1, 1, 4)
	m.Heard = Evidence{Term: n.Status().Leader.Term, Beat: seq}
	n.Step(now.Add(win+time.Millisecond), m)
	require.Equal(t, "m", n.Status().Leader.ID)
	assert.Equal(t, []string{"pool"}, ledgers(n.Ready()))
}

// A leader deposed by a better leader's heartbeat hands its ledger over in
// the same step: the successor hears what it started.
func TestDeposedLeaderHandsItsLedgerOver(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	l.Publish(now, []byte("started 12:00"))
	l.Ready()
	z := beat("z", 9, 1, TermRound(l.Status().Leader.Term)+1)
	z.Heard = Evidence{Term: l.Status().Leader.Term, Beat: l.beats} // z hears l: l gives way at once
	l.Step(now.Add(time.Millisecond), z)
	require.Equal(t, election.Follower, l.Status().Role)
	assert.Equal(t, []string{"started 12:00"}, ledgers(l.Ready()))
}

// Claims and votes carry the sender's payload; Payloads returns every payload
// received (not an Ack's sequence number), with sender and type.
func TestClaimsVotesAndLedgersArePassedUp(t *testing.T) {
	a := quorumNode(t, "a", 3, 1)
	b := quorumNode(t, "b", 3, 2)
	a.SetPayload([]byte("a's pool"))
	b.SetPayload([]byte("b's pool"))
	for a.Status().Role != election.Candidate {
		a.Tick(a.NextTick())
	}
	out := a.Ready()
	cl := out[len(out)-1].Msg
	require.Equal(t, Claim, cl.Type)
	assert.Equal(t, "a's pool", string(cl.Payload))
	b.Step(a.now, cl)
	votes := b.Ready()
	require.Len(t, votes, 1)
	assert.Equal(t, "b's pool", string(votes[0].Msg.Payload))
	assert.Equal(t, []PeerPayload{{From: "a", Type: Claim, Term: cl.Term, Payload: []byte("a's pool")}}, b.Payloads())
	assert.Empty(t, b.Payloads(), "Payloads forgets what it returned")

	a.Step(a.now.Add(time.Millisecond), votes[0].Msg)
	assert.Equal(t, []PeerPayload{{From: "b", Type: Vote, Term: cl.Term, Payload: []byte("b's pool")}}, a.Payloads(),
		"the vote's ledger is passed up before the claim window ends")
	for range 2 { // the claim is resent halfway, decided when its window ends
		a.Tick(a.NextTick())
	}
	require.Equal(t, election.Leader, a.Status().Role)

	// A Ledger message from anyone is heard; an Ack's payload is not.
	a.Step(a.now.Add(2*time.Millisecond), Message{Type: Ledger, Cluster: "test", From: "c", Incarnation: 1, Seq: 1, Payload: []byte("c's pool")})
	var seq [8]byte
	a.Step(a.now.Add(3*time.Millisecond), Message{Type: Ack, Cluster: "test", From: "b", Incarnation: b.cfg.Incarnation, Seq: 99, Term: cl.Term, Leader: "a", Payload: seq[:]})
	assert.Equal(t, []PeerPayload{{From: "c", Type: Ledger, Payload: []byte("c's pool")}}, a.Payloads())
}

// The Payloads queue is bounded when nobody drains it.
func TestPayloadsBounded(t *testing.T) {
	n := newTestNode(t)
	for i := range 3 * maxPayloads {
		n.Step(t0.Add(time.Duration(i)*time.Millisecond), Message{Type: Ledger, Cluster: "test", From: "c", Incarnation: 1, Seq: uint64(i + 1), Payload: []byte{byte(i)}})
	}
	h := n.Payloads()
	require.Len(t, h, maxPayloads)
	assert.Equal(t, byte(3*maxPayloads-1), h[len(h)-1].Payload[0], "the newest are kept")
}

// Without quorum a payload version is committed once a heartbeat carrying
// it is sent; in quorum mode once a majority acked a heartbeat carrying it
// (or a later version), and never by acks of older heartbeats.
func TestCommittedVersions(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	l.SetPayload([]byte("v1"))
	v := l.PayloadVersion()
	assert.False(t, l.Committed(t0, v), "not sent yet")
	l.Publish(now, []byte("v1"))
	assert.Equal(t, v, l.PayloadVersion(), "same bytes, same version")
	l.Publish(now, []byte("v2"))
	assert.True(t, l.Committed(t0, l.PayloadVersion()), "no quorum: sent is committed")

	a := quorumNode(t, "a", 3, 1)
	b := quorumNode(t, "b", 3, 2)
	for a.Status().Role != election.Candidate {
		a.Tick(a.NextTick())
	}
	out := a.Ready()
	b.Step(a.now, out[len(out)-1].Msg)
	a.Step(a.now, b.Ready()[0].Msg)
	for range 2 { // the claim is resent halfway, decided when its window ends
		a.Tick(a.NextTick())
	}
	require.Equal(t, election.Leader, a.Status().Role)
	first := a.Ready() // the first heartbeat (no payload yet)
	at := a.now
	a.Publish(at, []byte("run X"))
	ver := a.PayloadVersion()
	hb := a.Ready()
	require.Equal(t, Heartbeat, hb[0].Msg.Type)
	assert.False(t, a.Committed(t0, ver), "sent, not acked")
	ack := func(m Message, seq uint64) Message {
		var p [8]byte
		binary.BigEndian.PutUint64(p[:], m.Seq)
		return Message{Type: Ack, Cluster: "test", From: "b", Incarnation: b.cfg.Incarnation, Seq: seq, Term: m.Term, Leader: "a", Payload: p[:]}
	}
	a.Step(at, ack(first[0].Msg, 1000))
	assert.False(t, a.Committed(t0, ver), "an ack of an older heartbeat does not commit the new version")
	a.Step(at, ack(hb[0].Msg, 1001))
	assert.True(t, a.Committed(t0, ver), "2 of 3 hold it")
	a.Publish(at, []byte("run Y"))
	assert.False(t, a.Committed(t0, a.PayloadVersion()))
	assert.True(t, a.Committed(t0, ver), "an older version stays committed")
	assert.False(t, b.Committed(t0, ver), "a follower commits nothing")
}

// A node resumed from its Durable state claims above the persisted round,
// and Durable reports what it used and saw.
func TestResumeKeepsTermsGrowing(t *testing.T) {
	c := testConfig("me", 100, 1)
	c.Resume = Durable{Round: 40, MaxTerm: MakeTerm(40, 200, 9)}
	n, err := NewNode(c, t0)
	require.NoError(t, err)
	assert.Equal(t, c.Resume, n.Durable())
	for n.Status().Role != election.Leader {
		n.Tick(n.NextTick())
	}
	assert.Equal(t, uint64(41), TermRound(n.Status().Leader.Term), "claims above the persisted round")
	assert.Equal(t, uint64(41), n.Durable().Round)

	cold, _ := alone(t, "me", 100, 1)
	assert.Equal(t, uint64(1), TermRound(cold.Status().Leader.Term), "without Resume terms start over")
}
