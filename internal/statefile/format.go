package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
)

// Version is the format version this package writes. It reads it and
// every earlier version (listed in readable): a node upgraded in place
// keeps its state.
//
//	1: round, max_term, ledger, history
//	2: adds grant (the quorum promise's binding) and peers (the replay table)
//	3: adds grant.promise_ns (how long a restart keeps its start-up promise)
const Version = 3

// readable are the format versions Decode accepts. Each version's body is
// a subset of the next one's, so one State decodes them all; a field a
// version lacks is zero.
var readable = []int{1, 2, Version}

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
	// Ledger is the job ledger (jobs.Runner.StateLedger, jobs.Ledger
	// encoding): per job the newest instant started that this node knows
	// of, as it knows it.
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
	// PromiseNS is how long, in nanoseconds, a restarted node keeps its
	// start-up promise (protocol.Grant.Promise). Version 3; zero in older
	// files: the node's own promise.
	PromiseNS int64 `json:"promise_ns,omitempty"`
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
	return record(fmt.Sprintf("%s %d", magic, Version), body), nil
}

// record is a header line (prefix, the body's length and CRC-32C), then
// the body.
func record(prefix string, body []byte) []byte {
	hdr := fmt.Sprintf("%s %d %08x\n", prefix, len(body), crc32.Checksum(body, castagnoli))
	return append([]byte(hdr), body...)
}

// Decode parses file contents. Any problem (wrong magic or version, length
// or checksum mismatch, bad JSON) is an error saying what was wrong; it
// never panics.
func Decode(b []byte) (State, error) {
	var s State
	if err := newerFormat(b, magic, Version); err != nil {
		return s, err
	}
	if len(b) > MaxSize {
		return s, fmt.Errorf("%d bytes, more than the %d a state file can hold", len(b), MaxSize)
	}
	f, body, err := parseRecord(b, magic, "VERSION LENGTH CRC", true)
	if err != nil {
		return s, err
	}
	v, err := strconv.Atoi(string(f[1]))
	if err != nil || !slices.Contains(readable, v) {
		return s, fmt.Errorf("format version %q, this lanleader reads %v", f[1], readable)
	}
	if err := decodeJSON(body, &s); err != nil {
		return State{}, err
	}
	return s, nil
}

// NewerFormatError is a file written in a format newer than this binary
// reads: a downgrade (or a file copied from a newer node), not damage.
type NewerFormatError struct {
	// Format is the file's format version, Max the newest this binary
	// reads.
	Format, Max int
}

func (e *NewerFormatError) Error() string {
	return fmt.Sprintf("written by a newer lanleader (format %d; this one reads up to %d)", e.Format, e.Max)
}

// newerFormat returns a *NewerFormatError if b's header names a format
// above max. Only the magic and the version are read: a newer format may
// lay out the rest of its header otherwise.
func newerFormat(b []byte, magic string, max int) error {
	line, _, _ := bytes.Cut(b[:min(len(b), 256)], []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 2 || string(f[0]) != magic {
		return nil
	}
	if v, err := strconv.Atoi(string(f[1])); err == nil && v > max {
		return &NewerFormatError{Format: v, Max: max}
	}
	return nil
}

// parseRecord splits a record into its header fields (magic, then those
// layout names, the last two the body's length and CRC-32C) and its
// checked body. exact: the body is all that follows the header; otherwise bytes
// after it are ignored (a replay file's slot padding).
func parseRecord(b []byte, magic, layout string, exact bool) (fields [][]byte, body []byte, err error) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, nil, errors.New("no header line")
	}
	f := bytes.Fields(b[:nl])
	n := 1 + len(strings.Fields(layout))
	if len(f) != n || string(f[0]) != magic {
		return nil, nil, fmt.Errorf("header %q is not %q %s", truncate(b[:nl]), magic, layout)
	}
	size, err := strconv.Atoi(string(f[n-2]))
	body = b[nl+1:]
	if err != nil || size < 0 || size > len(body) || (exact && size != len(body)) {
		return nil, nil, fmt.Errorf("body is %d bytes, header says %q (truncated write?)", len(body), f[n-2])
	}
	body = body[:size]
	sum, err := strconv.ParseUint(string(f[n-1]), 16, 32)
	if err != nil || uint32(sum) != crc32.Checksum(body, castagnoli) {
		return nil, nil, fmt.Errorf("checksum %q does not match the body (corrupted)", f[n-1])
	}
	return f, body, nil
}

// decodeJSON decodes a checked body into v, strictly.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
