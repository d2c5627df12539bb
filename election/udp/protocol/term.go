package protocol

import (
	"cmp"
	"hash/fnv"
	"strings"
)

// Terms are 64-bit fencing tokens with structure:
//
//	bits 63..24  round    (40 bits) one more than the highest round the claimant had seen
//	bits 23..16  priority (8 bits)  the claimant's priority
//	bits 15..0   tag      (16 bits) NodeTag(claimant's NodeID)
//
// Comparing two terms as integers therefore compares (round, priority,
// tag), the claim order. Two different nodes never lead under the same term
// unless they share priority and tag (a 1 in 65536 chance per pair of
// equal-priority nodes; see docs/protocol.md), even when a partition makes
// both sides elect in the same round. That is what makes the term a usable fencing token without
// quorum: of two overlapping leaders, storage can always tell which is newer.
// The tag orders claims; it never identifies a node: nothing reads from a
// term which node led it (two ids can share a tag), the job runner names
// leaders from what it saw and a holder names its runs itself.
const (
	roundShift = 24
	// MaxRound is the largest round a term can carry.
	MaxRound = 1<<40 - 1
)

// MakeTerm builds the term a node of priority prio and tag tag claims in
// round.
func MakeTerm(round uint64, prio uint8, tag uint16) uint64 {
	return round<<roundShift | uint64(prio)<<16 | uint64(tag)
}

// TermRound returns the election round of a term.
func TermRound(term uint64) uint64 { return term >> roundShift }

// TermPriority returns the claimant priority encoded in a term.
func TermPriority(term uint64) uint8 { return uint8(term >> 16) }

// TermTag returns the claimant tag encoded in a term.
func TermTag(term uint64) uint16 { return uint16(term) }

// NodeTag is the 16-bit tag of a node id: FNV-1a folded to 16 bits.
func NodeTag(id string) uint16 {
	h := fnv.New32a()
	h.Write([]byte(id))
	s := h.Sum32()
	return uint16(s>>16) ^ uint16(s)
}

// better reports whether claim/leadership a beats b: higher term, then
// higher priority, then higher node id. Node id only decides between equal
// terms, i.e. a tag collision.
func better(aTerm uint64, aPrio uint8, aID string, bTerm uint64, bPrio uint8, bID string) bool {
	return cmp.Or(cmp.Compare(aTerm, bTerm), cmp.Compare(aPrio, bPrio), strings.Compare(aID, bID)) > 0
}
