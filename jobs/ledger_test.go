package jobs

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp/wire"
)

var t0 = time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC)

func entriesName(i int) string { return fmt.Sprintf("job-%03d", i) }

func entries(n int) []LedgerEntry {
	es := make([]LedgerEntry, n)
	for i := range es {
		es[i] = LedgerEntry{JobID: JobIDOf(entriesName(i)), Instant: t0.Add(time.Duration(i) * time.Minute),
			Outcome: Outcome(1 + i%5), Term: uint64(100 + i)}
	}
	return es
}

func TestLedgerRoundTrip(t *testing.T) {
	l := Ledger{Entries: entries(5)}
	b := l.Encode()
	got, err := DecodeLedger(b)
	require.NoError(t, err)
	assert.False(t, got.Truncated)
	assert.ElementsMatch(t, l.Entries, got.Entries)

	empty, err := DecodeLedger(Ledger{}.Encode())
	require.NoError(t, err)
	assert.Empty(t, empty.Entries)
}

// The limit: 60 jobs with current instants and terms always fit in
// MaxLedgerSize; past what fits, the most recently started are kept and the
// ledger says it is truncated.
func TestLedgerSizeLimit(t *testing.T) {
	b := Ledger{Entries: entries(60)}.Encode()
	assert.LessOrEqual(t, len(b), MaxLedgerSize)
	l, err := DecodeLedger(b)
	require.NoError(t, err)
	assert.False(t, l.Truncated)
	assert.Len(t, l.Entries, 60)
	t.Logf("60 entries: %d bytes (%.1f per entry)", len(b), float64(len(b)-3)/60)

	all := entries(500)
	b = Ledger{Entries: all}.Encode()
	assert.LessOrEqual(t, len(b), MaxLedgerSize)
	l, err = DecodeLedger(b)
	require.NoError(t, err)
	assert.True(t, l.Truncated)
	kept := len(l.Entries)
	assert.Greater(t, kept, 60)
	t.Logf("500 entries: %d kept in %d bytes", kept, len(b))
	// entries(i) has instant t0+i min: the newest are the last ones.
	assert.ElementsMatch(t, all[len(all)-kept:], l.Entries)
}

// A run its sender runs is marked held in the outcome byte; a ledger
// with such an entry is version 2, one without is the version 1 every
// earlier node reads (a rolling upgrade). Held goes only with running.
func TestLedgerHeldEntries(t *testing.T) {
	plain := entries(3)
	b := Ledger{Entries: plain}.Encode()
	assert.Equal(t, byte(1), b[0], "nothing held: version 1")
	held := append([]LedgerEntry(nil), plain...)
	held[1].Outcome, held[1].Held = OutcomeRunning, true
	b = Ledger{Entries: held}.Encode()
	assert.Equal(t, byte(2), b[0])
	l, err := DecodeLedger(b)
	require.NoError(t, err)
	assert.ElementsMatch(t, held, l.Entries)
	ended := append([]LedgerEntry(nil), plain[1:]...) // entries(3)[1] is ok, [2] failed
	ended[0].Held = true
	b = Ledger{Entries: ended}.Encode()
	assert.Equal(t, byte(1), b[0], "an ended run is nobody's: not marked")
	l, err = DecodeLedger(b)
	require.NoError(t, err)
	assert.ElementsMatch(t, plain[1:], l.Entries)
}

// A running entry carries its run's stop bound (bounded, in milliseconds
// rounded up, or unbounded) in a version 3 ledger; a ledger with none is
// the version 1 or 2 an earlier node reads. An ended entry carries none.
func TestLedgerStopBounds(t *testing.T) {
	es := entries(4) // [0] running, [1] ok, [2] failed, [3] cancelled
	es[0].Stop = stopWithin(12*time.Second + 300*time.Microsecond)
	es[3].Outcome, es[3].Stop, es[3].Held = OutcomeRunning, stopUnbounded, true
	es[1].Stop = stopWithin(time.Second)
	b := Ledger{Entries: es}.Encode()
	assert.Equal(t, byte(3), b[0])
	l, err := DecodeLedger(b)
	require.NoError(t, err)
	byID := map[uint64]LedgerEntry{}
	for _, e := range l.Entries {
		byID[e.JobID] = e
	}
	d, ok := byID[es[0].JobID].Stop.Bound()
	assert.True(t, ok)
	assert.Equal(t, 12*time.Second+time.Millisecond, d, "rounded up: a successor never waits less")
	assert.Equal(t, stopUnbounded, byID[es[3].JobID].Stop)
	assert.True(t, byID[es[3].JobID].Held)
	assert.False(t, byID[es[1].JobID].Stop.Carried(), "an ended run has no stop bound")
	assert.Equal(t, stopWithin(0), stopFromWire(stopWithin(0).wire()), "an http run's zero bound is a bound")

	es[0].Stop, es[3].Stop = StopBound{}, StopBound{}
	b = Ledger{Entries: es}.Encode()
	assert.Equal(t, byte(2), b[0], "held, no stop bound")
	l, err = DecodeLedger(b)
	require.NoError(t, err)
	for _, e := range l.Entries {
		assert.False(t, e.Stop.Carried())
	}
}

// A run refused before it started (OutcomeRefused) goes in a version 3
// ledger only: earlier versions do not know the outcome. It names its
// instant as not started.
func TestLedgerRefusedEntries(t *testing.T) {
	e := LedgerEntry{JobID: 1, Instant: t0, Outcome: OutcomeRefused, Term: 4}
	b := Ledger{Entries: []LedgerEntry{e}}.Encode()
	assert.Equal(t, byte(3), b[0])
	l, err := DecodeLedger(b)
	require.NoError(t, err)
	assert.Equal(t, []LedgerEntry{e}, l.Entries)
	assert.Equal(t, t0.Add(-time.Second), e.lastStarted())
	assert.Equal(t, t0, LedgerEntry{Instant: t0, Outcome: OutcomeOK}.lastStarted())
	assert.True(t, newer(e, e.ended(OutcomeRunning)), "refused ends the running entry of its run")
	assert.False(t, OutcomeRefused.final(), "not a run's end: no history record")
	b[0] = 2
	_, err = DecodeLedger(b)
	assert.ErrorContains(t, err, "unknown outcome 7")
}

func TestLedgerDecodeErrors(t *testing.T) {
	good := Ledger{Entries: entries(2)}.Encode()
	dup := Ledger{Entries: []LedgerEntry{entries(1)[0], entries(1)[0]}}.Encode()
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"version", append([]byte{9}, good[1:]...), "version 9"},
		{"flags", append([]byte{1, 0x80}, good[2:]...), "unknown flags"},
		{"count too big", []byte{1, 0, 50, 1, 2, 3}, "cannot fit"},
		{"trailing", append(append([]byte(nil), good...), 0), "trailing"},
		{"cut short", good[:len(good)-1], "entry 1"},
		{"bad outcome", func() []byte { b := Ledger{Entries: []LedgerEntry{{Instant: t0, Outcome: 9}}}.Encode(); return b }(), "unknown outcome 9"},
		{"repeated job", dup, "repeated"},
		{"held in version 1", func() []byte {
			b := Ledger{Entries: []LedgerEntry{{Instant: t0, Outcome: OutcomeRunning}}}.Encode()
			b[len(b)-2] |= 0x80
			return b
		}(), "unknown outcome 129"},
		{"held but ended", func() []byte {
			b := Ledger{Entries: []LedgerEntry{{Instant: t0, Outcome: OutcomeRunning, Held: true}}}.Encode()
			b[len(b)-2] = 0x80 | byte(OutcomeOK)
			return b
		}(), "held but ok"},
		{"stop bound in version 2", func() []byte {
			b := Ledger{Entries: []LedgerEntry{{Instant: t0, Outcome: OutcomeRunning, Held: true}}}.Encode()
			b[len(b)-2] |= 0x40
			return b
		}(), "unknown outcome 65"},
		{"stop bound but ended", func() []byte {
			b := Ledger{Entries: []LedgerEntry{{Instant: t0, Outcome: OutcomeRunning, Stop: stopWithin(time.Second)}}}.Encode()
			b[len(b)-4] = 0x40 | byte(OutcomeOK) // outcome, term, stop (2 bytes)
			return b
		}(), "stop bound but ok"},
		{"stop bound cut short", func() []byte {
			b := Ledger{Entries: []LedgerEntry{{Instant: t0, Outcome: OutcomeRunning, Stop: stopWithin(time.Second)}}}.Encode()
			return b[:len(b)-1]
		}(), "bad stop bound"},
		{"stop bound too long", func() []byte {
			b := Ledger{Entries: []LedgerEntry{{Instant: t0, Outcome: OutcomeRunning, Stop: stopWithin(time.Second)}}}.Encode()
			b = b[:len(b)-2]
			return binary.AppendUvarint(b, maxStopWire+1)
		}(), "bad stop bound"},
		{"oversize", make([]byte, MaxLedgerSize+1), "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeLedger(tt.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func FuzzLedgerDecode(f *testing.F) {
	f.Add(Ledger{Entries: entries(3)}.Encode())
	f.Add(Ledger{Entries: entries(200)}.Encode())
	f.Add(Ledger{}.Encode())
	f.Add(Ledger{Entries: []LedgerEntry{{JobID: 1, Instant: t0, Outcome: OutcomeRunning, Term: 7, Held: true}}}.Encode())
	f.Add(Ledger{Entries: []LedgerEntry{{JobID: 1, Instant: t0, Outcome: OutcomeRunning, Term: 7, Stop: stopWithin(time.Second)}}}.Encode())
	f.Add([]byte{1, 0, 1})
	f.Add([]byte{1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeLedger(b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to an equivalent ledger.
		again, err := DecodeLedger(l.Encode())
		if err != nil {
			t.Fatalf("re-encode of a decoded ledger does not decode: %v", err)
		}
		held := func(es []LedgerEntry) (n int) {
			for _, e := range es {
				if e.Held {
					n++
				}
			}
			return n
		}
		if len(again.Entries) != len(l.Entries) || again.Truncated != l.Truncated || held(again.Entries) != held(l.Entries) {
			t.Fatalf("round trip changed the ledger: %+v vs %+v", l, again)
		}
	})
}

func TestLatestDue(t *testing.T) {
	every := func(spec string) Schedule {
		s, err := ParseSchedule(spec)
		require.NoError(t, err)
		return s
	}
	tests := []struct {
		name       string
		spec       string
		after, now time.Time
		want       time.Time
		wantN      int
		exactCount bool
	}{
		{"none due", "* * * * *", t0, t0.Add(59 * time.Second), time.Time{}, 0, true},
		{"one due", "* * * * *", t0, t0.Add(61 * time.Second), t0.Add(time.Minute), 1, true},
		{"several due", "* * * * *", t0, t0.Add(5*time.Minute + time.Second), t0.Add(5 * time.Minute), 5, true},
		{"exactly now", "* * * * *", t0, t0.Add(2 * time.Minute), t0.Add(2 * time.Minute), 2, true},
		// Ten years of seconds: jumps ahead, still finds the latest instant.
		{"huge gap, spec", "* * * * * *", t0, t0.Add(10 * 365 * 24 * time.Hour).Add(500 * time.Millisecond),
			t0.Add(10 * 365 * 24 * time.Hour), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := latestDue(every(tt.spec), tt.after, tt.now)
			assert.True(t, tt.want.Equal(got), "got %v want %v", got, tt.want)
			if tt.exactCount {
				assert.Equal(t, tt.wantN, n)
			} else {
				assert.Positive(t, n)
			}
		})
	}
	// @every: the latest is within one period of now.
	got, n := latestDue(every("@every 1s"), t0, t0.Add(1000*time.Hour))
	assert.Positive(t, n)
	assert.False(t, got.After(t0.Add(1000*time.Hour)))
	assert.Less(t, t0.Add(1000*time.Hour).Sub(got), time.Second+time.Nanosecond)
}

// AdoptLedger merges: the later entry per job wins whatever order ledgers
// arrive in (two leaders of a split), an outcome update for the same
// instant replaces the old one but a stale one never does, and a truncated
// ledger makes the jobs it left out unknown.
func TestAdoptLedgerMerges(t *testing.T) {
	r := newTestRunner(t, "c", nil, everyMinute("a"), everyMinute("b"))
	id := JobIDOf("a")
	entry := func(min int, o Outcome, term uint64) LedgerEntry {
		return LedgerEntry{JobID: id, Instant: t0.Add(time.Duration(min) * time.Minute), Outcome: o, Term: term}
	}
	adopt := func(l Ledger) { require.NoError(t, r.AdoptLedger(l.Encode())) }
	known := func(name string) *LedgerEntry {
		for _, s := range r.Snapshot() {
			if s.Name == name {
				return s.Ledger
			}
		}
		return nil
	}

	adopt(Ledger{Entries: []LedgerEntry{entry(5, OutcomeRunning, 5)}})
	adopt(Ledger{Entries: []LedgerEntry{entry(3, OutcomeOK, 6)}}) // the other side of a split
	require.NotNil(t, known("a"))
	assert.Equal(t, entry(5, OutcomeRunning, 5), *known("a"))

	adopt(Ledger{Entries: []LedgerEntry{entry(5, OutcomeInterrupted, 5)}})
	assert.Equal(t, OutcomeInterrupted, known("a").Outcome, "same instant and term: the run's end wins")
	adopt(Ledger{Entries: []LedgerEntry{entry(5, OutcomeOK, 5)}})
	assert.Equal(t, OutcomeOK, known("a").Outcome, "its own outcome over a leader's conclusion")
	for _, stale := range []Outcome{OutcomeRunning, OutcomeInterrupted} {
		adopt(Ledger{Entries: []LedgerEntry{entry(5, stale, 5)}}) // a relay by a node that missed the end
		assert.Equal(t, OutcomeOK, known("a").Outcome, "a stale %v never takes the run back", stale)
	}

	adopt(Ledger{Entries: []LedgerEntry{{JobID: JobIDOf("b"), Instant: t0, Outcome: OutcomeOK, Term: 7}}, Truncated: true})
	assert.Nil(t, known("a"), "left out of a truncated ledger: unknown")
	require.NotNil(t, known("b"))

	adopt(Ledger{Entries: []LedgerEntry{entry(9, OutcomeOK, 7)}})
	require.NotNil(t, known("a"))
	assert.Equal(t, entry(9, OutcomeOK, 7), *known("a"))

	err := r.AdoptLedger([]byte{1, 2, 3})
	require.Error(t, err)
	assert.Equal(t, entry(9, OutcomeOK, 7), *known("a"), "a bad ledger changes nothing")
}

// The ledger must fit the heartbeat payload the wire codec accepts.
func TestLedgerFitsHeartbeat(t *testing.T) {
	assert.LessOrEqual(t, MaxLedgerSize, wire.MaxPayload)
	assert.LessOrEqual(t, len(Ledger{Entries: entries(1000)}.Encode()), wire.MaxPayload)
}
