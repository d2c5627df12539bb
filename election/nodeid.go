package election

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxNodeIDLen bounds a node id or a cluster name, in bytes of UTF-8: the
// udp wire format carries them in 1-64 bytes (wire.MaxIDLen).
const MaxNodeIDLen = 64

// NodeIDRule says in words what CheckNodeID accepts.
const NodeIDRule = "a node id is 1-64 bytes of printable UTF-8 without whitespace"

// ClusterNameRule says in words what CheckClusterName accepts.
const ClusterNameRule = "a cluster name is 1-64 bytes of printable UTF-8 (spaces allowed)"

// CheckNodeID reports whether id can be a node id: 1 to MaxNodeIDLen bytes
// of valid UTF-8, every character printable and none of them whitespace.
// Ids travel on the wire, in etcd, in logs (key=value), in metrics and in
// jobs' environment (LANLEADER_NODE), where a space, a control character
// or a broken byte sequence would be ambiguous or invisible. The error
// names the first offending character and its byte offset, not the id: the
// caller quotes the id with the flag or key that set it. Every mode's
// command line checks its node id here.
func CheckNodeID(id string) error { return checkName(id, NodeIDRule, false) }

// CheckClusterName reports whether name can name a udp cluster: a node
// id's rule (CheckNodeID), for the same reasons, except that ASCII spaces
// are allowed. Names with spaces were always accepted, and refusing one
// now would leave a rename as the only way on: every node of a cluster
// must be renamed at once, or the renamed ones elect a leader of their
// own and jobs run twice.
func CheckClusterName(name string) error { return checkName(name, ClusterNameRule, true) }

// checkName applies the rule of names that go on the wire and into logs;
// rule says it in words for the error; spaces allows the ASCII space.
func checkName(s, rule string, spaces bool) error {
	switch {
	case s == "":
		return errors.New("empty: " + rule)
	case len(s) > MaxNodeIDLen:
		return fmt.Errorf("%d bytes, at most %d", len(s), MaxNodeIDLen)
	}
	for i, r := range s {
		var what string
		switch {
		case r == utf8.RuneError && !validRuneAt(s, i):
			return fmt.Errorf("not valid UTF-8 at byte %d: %s", i, rule)
		case r == ' ' && spaces:
			continue
		case r == ' ':
			what = "space"
		case unicode.IsSpace(r):
			what = "whitespace"
		case unicode.IsControl(r):
			what = "control character"
		case !unicode.IsPrint(r):
			what = "non-printable character"
		default:
			continue
		}
		return fmt.Errorf("%s (%U) at byte %d: %s", what, r, i, rule)
	}
	return nil
}

// validRuneAt reports whether a valid encoding starts at byte i of s (a
// literal U+FFFD is valid; a broken sequence also decodes as U+FFFD).
func validRuneAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return r != utf8.RuneError || size > 1
}
