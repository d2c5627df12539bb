package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
)

// Version is the format version this package writes. It reads it and
// every earlier version (listed in readable): a node upgraded in place
// keeps its state.
//
//	1: round, max_term, ledger, history
//	2: adds grant (the quorum promise's binding) and peers (the replay table)
const Version = 2

// readable are the format versions Decode accepts. Each version's body is
// a subset of the next one's, so one State decodes them all; a field a
// version lacks is zero.
var readable = []int{1, Version}

// magic starts every state file.
const magic = "lanleader-state"

// MaxSize bounds a state file; anything larger is corrupt (a ledger is at
// most 1 KiB, a history a few KiB per job).
const MaxSize = 16 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// State is what a node keeps. The zero State is a cold start.
type State struct {
	// Round is the highest election round this node used or saw; a
	// restarted node claims above it, so terms keep growing even when
	// every node restarts at once.
	Round uint64 `json:"round"`
	// MaxTerm is the highest term this node used or saw.
	MaxTerm uint64 `json:"max_term"`
	// Ledger is the job ledger (jobs.Ledger encoding): per job the newest
	// instant started that this node knows of.
	Ledger []byte `json:"ledger,omitempty"`
	// History is the run history (jobs.History snapshot).
	History json.RawMessage `json:"history,omitempty"`
	// Grant is the (term, candidate) of this node's last quorum vote or
	// ack; zero if it never granted one. A restarted node keeps its
	// start-up promise to that candidate instead of to nobody. Version 2.
	Grant Grant `json:"grant,omitzero"`
	// Peers is the replay table: per peer the newest incarnation and
	// sequence number accepted, most recently heard first. A restarted
	// node drops packets at or below them. Version 2.
	Peers []Peer `json:"peers,omitempty"`
}

// Grant is the binding of a quorum vote or ack.
type Grant struct {
	Term uint64 `json:"term"`
	To   string `json:"to"`
}

// Peer is one replay table entry.
type Peer struct {
	ID          string `json:"id"`
	Incarnation uint64 `json:"inc"`
	Seq         uint64 `json:"seq"`
}

// Encode returns the file contents for s.
func Encode(s State) ([]byte, error) {
	body, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("statefile: encode: %w", err)
	}
	hdr := fmt.Sprintf("%s %d %d %08x\n", magic, Version, len(body), crc32.Checksum(body, castagnoli))
	return append([]byte(hdr), body...), nil
}

// Decode parses file contents. Any problem (wrong magic or version, length
// or checksum mismatch, bad JSON) is an error saying what was wrong; it
// never panics.
func Decode(b []byte) (State, error) {
	var s State
	if len(b) > MaxSize {
		return s, fmt.Errorf("%d bytes, more than the %d a state file can hold", len(b), MaxSize)
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return s, errors.New("no header line")
	}
	f := bytes.Fields(b[:nl])
	if len(f) != 4 || string(f[0]) != magic {
		return s, fmt.Errorf("header %q is not %q VERSION LENGTH CRC", truncate(b[:nl]), magic)
	}
	v, err := strconv.Atoi(string(f[1]))
	if err != nil || !slices.Contains(readable, v) {
		return s, fmt.Errorf("format version %q, this lanleader reads %v", f[1], readable)
	}
	n, err := strconv.Atoi(string(f[2]))
	body := b[nl+1:]
	if err != nil || n != len(body) {
		return s, fmt.Errorf("body is %d bytes, header says %q (truncated write?)", len(body), f[2])
	}
	sum, err := strconv.ParseUint(string(f[3]), 16, 32)
	if err != nil || uint32(sum) != crc32.Checksum(body, castagnoli) {
		return s, fmt.Errorf("checksum %q does not match the body (corrupted)", f[3])
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return State{}, fmt.Errorf("body: %w", err)
	}
	return s, nil
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
