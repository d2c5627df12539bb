package protocol

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ledgerFlags returns the Flags of the Ledger messages in es.
func ledgerFlags(es []Envelope) []uint8 {
	var fs []uint8
	for _, e := range es {
		if e.Msg.Type == Ledger {
			fs = append(fs, e.Msg.Flags&FlagHolding)
		}
	}
	return fs
}

// A leader deposed while it still runs jobs hands its ledger over marked
// holding in the step it steps down, keeps sending it on every heartbeat of
// its new leader past the gathering window, and sends it unmarked, with the
// outcome, the moment it stops holding and on every heartbeat for Hold
// (one lost packet must not make the leader take a finished run for an
// interrupted one); then nothing more.
func TestHoldingFollowerSendsItsLedgerOnEveryHeartbeat(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	l.Publish(now, []byte("running 12:00"))
	l.SetHolding(now, true)
	assert.Empty(t, ledgerFlags(l.Ready()), "a leader sends no Ledger")

	round := TermRound(l.Status().Leader.Term) + 1
	z := beat("z", 9, 1, round)
	z.Heard = Evidence{Term: l.Status().Leader.Term, Beat: l.beats}
	at := now.Add(time.Millisecond)
	l.Step(at, z)
	require.Equal(t, election.Follower, l.Status().Role)
	assert.Equal(t, []uint8{FlagHolding}, ledgerFlags(l.Ready()), "at once, marked")

	seq := uint64(2)
	for range 3 * int(l.GatherWindow()/l.cfg.Interval) {
		at = at.Add(l.cfg.Interval)
		l.Step(at, beat("z", 9, seq, round))
		seq++
		out := l.Ready()
		require.Equal(t, []uint8{FlagHolding}, ledgerFlags(out), "on every heartbeat, past the window")
		assert.Equal(t, []string{"running 12:00"}, ledgers(out))
	}

	l.SetPayload([]byte("ok 12:00"))
	l.SetHolding(at, false)
	out := l.Ready()
	assert.Equal(t, []uint8{0}, ledgerFlags(out), "at once at release, unmarked")
	assert.Equal(t, []string{"ok 12:00"}, ledgers(out), "with the outcome")
	released := at
	for at.Sub(released) < l.t.Hold-l.cfg.Interval {
		at = at.Add(l.cfg.Interval)
		l.Step(at, beat("z", 9, seq, round))
		seq++
		out := l.Ready()
		require.Equal(t, []uint8{0}, ledgerFlags(out), "repeated on every heartbeat while the leader would still wait")
		assert.Equal(t, []string{"ok 12:00"}, ledgers(out))
	}
	at = released.Add(l.t.Hold)
	l.Step(at, beat("z", 9, seq, round))
	assert.Empty(t, ledgers(l.Ready()), "nothing once the leader's hold would have lapsed")
}

// A follower that does not hold sends no Ledger after the gathering window
// and never marks one; setting holding the same twice sends nothing.
func TestNotHoldingFollowerSendsNoMarkedLedger(t *testing.T) {
	n := newTestNode(t)
	n.SetPayload([]byte("pool"))
	at := t0.Add(10 * time.Millisecond)
	n.Step(at, beat("l", 1, 1, 3))
	assert.Equal(t, []uint8{0}, ledgerFlags(n.Ready()))
	n.SetHolding(at, false)
	assert.Empty(t, n.Ready(), "no change, no message")
	seq := uint64(2)
	for at = at.Add(n.GatherWindow()); seq < 10; seq++ {
		n.Step(at, beat("l", 1, seq, 3))
		at = at.Add(n.cfg.Interval)
		assert.Empty(t, ledgers(n.Ready()), "not after the window")
	}
	n.SetHolding(at, true)
	assert.Equal(t, []uint8{FlagHolding}, ledgerFlags(n.Ready()), "at once when it starts holding")
	n.SetHolding(at, true)
	assert.Empty(t, n.Ready())
}

// The receiver tells the holder's own ledger (Holding) from anything else
// carrying a payload; the flag means nothing on a leader's messages.
func TestHoldingIsPassedUpOnlyFromLedgerClaimAndVote(t *testing.T) {
	n := newTestNode(t)
	lg := Message{Type: Ledger, Cluster: "test", From: "h", Incarnation: 1, Seq: 1, Flags: FlagHolding, Payload: []byte("h's runs")}
	n.Step(t0.Add(time.Millisecond), lg)
	hb := beat("l", 1, 1, 3)
	hb.Flags, hb.Payload = FlagHolding, []byte("l's ledger")
	n.Step(t0.Add(2*time.Millisecond), hb)
	relay := Message{Type: Ledger, Cluster: "test", From: "f", Incarnation: 1, Seq: 1, Payload: []byte("f's pool")}
	n.Step(t0.Add(3*time.Millisecond), relay)
	got := n.Payloads()
	require.Len(t, got, 3)
	assert.True(t, got[0].Holding, "a holder's Ledger")
	assert.False(t, got[1].Holding, "a heartbeat")
	assert.False(t, got[2].Holding, "a relay")
}
