package jobs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"time"
)

// MaxLedgerSize is the largest encoded ledger, in bytes. The leader
// piggybacks the ledger on every heartbeat, which must fit one unfragmented
// UDP datagram (1472 bytes on Ethernet) together with the protocol header
// and HMAC; 1 KiB leaves room for those. A typical entry takes 16 bytes
// (up to 29), so about 60 jobs always fit.
const MaxLedgerSize = 1024

// The first byte of an encoded ledger is its version; bump it on any
// change of layout. Version 2 adds one bit to the outcome byte
// (heldBit); version 3 another (stopBit), which says that a stop bound
// follows the term, and the outcome refused. A ledger is written in the
// lowest version that holds its entries, so one without a held entry, a
// stop bound or a refused run is version 1,
// which nodes that know only version 1 read (a rolling upgrade: see
// docs/jobs.md).
const (
	ledgerVersion     = 1
	ledgerVersionHeld = 2
	ledgerVersionStop = 3
)

// heldBit, in a version 2 or 3 ledger's outcome byte, marks a held entry
// (LedgerEntry.Held).
const heldBit = 0x80

// stopBit, in a version 3 ledger's outcome byte, says that the entry
// carries its run's stop bound (LedgerEntry.Stop): a uvarint after the
// term, 0 when nothing bounds the run, else the bound in milliseconds
// plus one.
const stopBit = 0x40

// flagTruncated marks a ledger that left entries out to stay within
// MaxLedgerSize.
const flagTruncated = 1

// minEntrySize is the smallest encoded entry: id, one-byte instant,
// outcome, one-byte term.
const minEntrySize = 8 + 1 + 1 + 1

// Outcome is how the run of a ledger entry's instant ended (so far).
type Outcome uint8

// Outcome values go on the wire: only append.
const (
	// OutcomeRunning: the run had started and not finished when the entry
	// was written.
	OutcomeRunning Outcome = 1
	// OutcomeOK: the run exited 0 (on some attempt).
	OutcomeOK Outcome = 2
	// OutcomeFailed: every attempt failed (non-zero exit, timeout, could
	// not start).
	OutcomeFailed Outcome = 3
	// OutcomeCancelled: the run was stopped because leadership was lost or
	// lanleader stopped.
	OutcomeCancelled Outcome = 4
	// OutcomeInterrupted: a new leader found the entry still running; the
	// run's real end is unknown (the old leader died or was cut off).
	OutcomeInterrupted Outcome = 5
	// OutcomeNone: no instant started yet; Instant is when a leader took up
	// the schedule with nothing known before it (a cold start). Later
	// leaders treat instants after it as missed, not as never due.
	OutcomeNone Outcome = 6
	// OutcomeRefused: the run of Instant was recorded running, then
	// refused before its first attempt started (refused.go): that instant
	// did not start, and whoever acts next decides it again, as an
	// instant missed (misfire). Only in a version 3 ledger.
	OutcomeRefused Outcome = 7
)

var outcomeNames = [...]string{"", "running", "ok", "failed", "cancelled", "interrupted", "none", "refused"}

// String returns the outcome's name as used in logs, metrics and JSON.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && o != 0 {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// MarshalText encodes the outcome as its name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText parses an outcome's name (history snapshots, /jobs).
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, name := range outcomeNames {
		if i != 0 && name == string(b) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("jobs: unknown outcome %q", b)
}

// final reports whether a run with this outcome has ended.
func (o Outcome) final() bool {
	return o == OutcomeOK || o == OutcomeFailed || o == OutcomeCancelled || o == OutcomeInterrupted
}

// reported reports whether o is an outcome a run's own node reported (ok,
// failed, cancelled), rather than one another node concluded
// (interrupted), none yet, or a start refused before it ran (refused).
func (o Outcome) reported() bool {
	return o == OutcomeOK || o == OutcomeFailed || o == OutcomeCancelled
}

func (o Outcome) valid() bool { return o >= OutcomeRunning && o <= OutcomeRefused }

// progress orders the states of one run (one instant under one term): it
// is running, then it ends once. Interrupted is what a leader concludes
// when the end is unknown, so an outcome heard from the run's node
// (ok, failed, cancelled) supersedes it. A stale copy of an earlier state
// (a relay by a node that missed the end, a late packet) never takes a
// run back.
func (o Outcome) progress() int {
	switch o {
	case OutcomeOK, OutcomeFailed, OutcomeCancelled, OutcomeRefused:
		return 3
	case OutcomeInterrupted:
		return 2
	case OutcomeRunning:
		return 1
	}
	return 0
}

// LedgerEntry is what the ledger knows about one job: the last scheduled
// instant started, how that run ended, and under which term it started.
type LedgerEntry struct {
	// JobID identifies the job: JobIDOf(name).
	JobID uint64 `json:"-"`
	// Instant is the scheduled instant (whole seconds), not the firing time.
	Instant time.Time `json:"instant"`
	// Outcome is how that run ended, or OutcomeRunning.
	Outcome Outcome `json:"outcome"`
	// Term is the term the run started under.
	Term uint64 `json:"term"`
	// Held marks a running entry as a run of the node that encoded the
	// ledger. In what a node tells its peers (Runner.Ledger), a run its
	// current process runs: what a node that no longer leads says it
	// still runs (holds.go). In what it keeps in its state file
	// (Runner.StateLedger), a run it started, so that its next process
	// knows it led that run's term (Runner.RestoreLedger). It is the
	// node's word about itself, never relayed: AdoptLedger drops it.
	Held bool `json:"-"`
	// Stop is how long after its leader stops acting the run of a
	// running entry can still be going, by that leader's clock: set by
	// the node that started the run, from the spec it ran (quiet.go), and
	// relayed with the entry, so a successor waits by the run's own bound,
	// not by its own config. The zero StopBound is "not carried": the
	// entry came from a node of an earlier version. Only a running entry
	// carries it.
	Stop StopBound `json:"-"`
}

// lastStarted returns the newest instant e says was started: its own, but
// for a run refused before it started, the one before (whole seconds:
// every schedule's instants are).
func (e LedgerEntry) lastStarted() time.Time {
	if e.Outcome == OutcomeRefused {
		return e.Instant.Add(-time.Second)
	}
	return e.Instant
}

// ended returns e, a running entry, with its run's outcome o: an ended run
// carries no stop bound.
func (e LedgerEntry) ended(o Outcome) LedgerEntry {
	e.Outcome, e.Stop = o, StopBound{}
	return e
}

// Ledger is a set of entries, at most one per job.
type Ledger struct {
	Entries []LedgerEntry
	// Truncated is set when the encoder left entries out; a job missing
	// from a truncated ledger is unknown, not "never run".
	Truncated bool
}

// JobIDOf returns the 64-bit id a job name is known by in ledgers (FNV-1a).
// 64 bits make a collision between the jobs of one config negligible;
// NewRunner rejects one anyway.
func JobIDOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// ManualJobIDOf returns the ledger id of a job's manual runs (`lanleader
// trigger`): an entry of its own, so a manual run is never mistaken for a
// scheduled instant and cannot move the schedule's cursor.
func ManualJobIDOf(name string) uint64 { return JobIDOf("\x00manual\x00" + name) }

// Encode returns the compact binary form of l, at most MaxLedgerSize bytes.
// If the entries do not all fit, the most recently started ones are kept
// (they are the ones a failover can duplicate or miss) and the result is
// marked truncated.
func (l Ledger) Encode() []byte {
	es := append([]LedgerEntry(nil), l.Entries...)
	sort.Slice(es, func(i, j int) bool {
		if !es[i].Instant.Equal(es[j].Instant) {
			return es[i].Instant.After(es[j].Instant)
		}
		return es[i].JobID < es[j].JobID
	})
	body := make([]byte, 0, MaxLedgerSize)
	var tmp [8 + binary.MaxVarintLen64*3 + 1]byte
	n, truncated, version := 0, l.Truncated, byte(ledgerVersion)
	const header = 2 + binary.MaxVarintLen16 // version, flags, count (<= 1024)
	for _, e := range es {
		b := binary.BigEndian.AppendUint64(tmp[:0], e.JobID)
		b = binary.AppendVarint(b, e.Instant.Unix())
		o := byte(e.Outcome)
		if e.Held && e.Outcome == OutcomeRunning {
			o |= heldBit
		}
		if e.Stop.carried && e.Outcome == OutcomeRunning {
			o |= stopBit
		}
		b = append(b, o)
		b = binary.AppendUvarint(b, e.Term)
		if o&stopBit != 0 {
			b = binary.AppendUvarint(b, e.Stop.wire())
		}
		if header+len(body)+len(b) > MaxLedgerSize {
			truncated = true
			continue
		}
		body = append(body, b...)
		n++
		switch {
		case o&stopBit != 0 || e.Outcome == OutcomeRefused:
			version = ledgerVersionStop
		case o&heldBit != 0:
			version = max(version, ledgerVersionHeld)
		}
	}
	flags := byte(0)
	if truncated {
		flags |= flagTruncated
	}
	out := make([]byte, 0, header+len(body))
	out = append(out, version, flags)
	out = binary.AppendUvarint(out, uint64(n))
	return append(out, body...)
}

// DecodeLedger parses an encoded ledger, of version 1, 2 or 3. Anything
// malformed (unknown version, short or trailing bytes, unknown outcome, a
// held entry or a stop bound that is not running or in a version that
// has no such bit, repeated job, oversize) is an error; it never panics.
func DecodeLedger(b []byte) (Ledger, error) {
	var l Ledger
	if len(b) > MaxLedgerSize {
		return l, fmt.Errorf("jobs: ledger: %d bytes, limit %d", len(b), MaxLedgerSize)
	}
	if len(b) < 3 {
		return l, errors.New("jobs: ledger: too short")
	}
	version := b[0]
	if version < ledgerVersion || version > ledgerVersionStop {
		return l, fmt.Errorf("jobs: ledger: version %d, want %d to %d", version, ledgerVersion, ledgerVersionStop)
	}
	if b[1]&^flagTruncated != 0 {
		return l, fmt.Errorf("jobs: ledger: unknown flags %#x", b[1])
	}
	l.Truncated = b[1]&flagTruncated != 0
	count, k := binary.Uvarint(b[2:])
	if k <= 0 {
		return Ledger{}, errors.New("jobs: ledger: bad entry count")
	}
	rest := b[2+k:]
	if count > uint64(len(rest)/minEntrySize) {
		return Ledger{}, fmt.Errorf("jobs: ledger: %d entries cannot fit in %d bytes", count, len(rest))
	}
	seen := make(map[uint64]bool, count)
	l.Entries = make([]LedgerEntry, 0, count)
	for i := range count {
		if len(rest) < 8 {
			return Ledger{}, fmt.Errorf("jobs: ledger: entry %d: truncated", i)
		}
		e := LedgerEntry{JobID: binary.BigEndian.Uint64(rest)}
		rest = rest[8:]
		secs, k := binary.Varint(rest)
		if k <= 0 {
			return Ledger{}, fmt.Errorf("jobs: ledger: entry %d: bad instant", i)
		}
		rest = rest[k:]
		if len(rest) < 1 {
			return Ledger{}, fmt.Errorf("jobs: ledger: entry %d: truncated", i)
		}
		o := rest[0]
		rest = rest[1:]
		if version >= ledgerVersionHeld {
			e.Held, o = o&heldBit != 0, o&^heldBit
		}
		hasStop := false
		if version >= ledgerVersionStop {
			hasStop, o = o&stopBit != 0, o&^stopBit
		}
		e.Outcome = Outcome(o)
		if !e.Outcome.valid() || e.Outcome == OutcomeRefused && version < ledgerVersionStop {
			return Ledger{}, fmt.Errorf("jobs: ledger: entry %d: unknown outcome %d", i, e.Outcome)
		}
		if e.Held && e.Outcome != OutcomeRunning {
			return Ledger{}, fmt.Errorf("jobs: ledger: entry %d: held but %s", i, e.Outcome)
		}
		e.Term, k = binary.Uvarint(rest)
		if k <= 0 {
			return Ledger{}, fmt.Errorf("jobs: ledger: entry %d: bad term", i)
		}
		rest = rest[k:]
		if hasStop {
			if e.Outcome != OutcomeRunning {
				return Ledger{}, fmt.Errorf("jobs: ledger: entry %d: stop bound but %s", i, e.Outcome)
			}
			v, k := binary.Uvarint(rest)
			if k <= 0 || v > maxStopWire {
				return Ledger{}, fmt.Errorf("jobs: ledger: entry %d: bad stop bound", i)
			}
			rest = rest[k:]
			e.Stop = stopFromWire(v)
		}
		if seen[e.JobID] {
			return Ledger{}, fmt.Errorf("jobs: ledger: entry %d: job %016x repeated", i, e.JobID)
		}
		seen[e.JobID] = true
		e.Instant = time.Unix(secs, 0).UTC()
		l.Entries = append(l.Entries, e)
	}
	if len(rest) != 0 {
		return Ledger{}, fmt.Errorf("jobs: ledger: %d trailing bytes", len(rest))
	}
	return l, nil
}
