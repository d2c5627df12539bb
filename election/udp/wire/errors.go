package wire

import "errors"

// Sentinel errors wrapped by Decode, one per drop reason; test with
// errors.Is, or map to a metrics label with Reason.
var (
	// ErrMalformed: the packet is truncated, too long, has a length field
	// out of bounds, invalid UTF-8 in a string or trailing bytes.
	ErrMalformed = errors.New("malformed packet")
	// ErrBadMagic: the packet does not start with Magic; probably not
	// lanleader traffic at all.
	ErrBadMagic = errors.New("not a lanleader packet")
	// ErrBadVersion: a lanleader packet of a wire version this node does
	// not speak.
	ErrBadVersion = errors.New("unsupported wire version")
	// ErrUnknownType: a message type this node does not know (a newer
	// node's, since types are append-only).
	ErrUnknownType = errors.New("unknown message type")
	// ErrUnsigned: a keyring is configured but the packet carries no MAC.
	ErrUnsigned = errors.New("unsigned packet")
	// ErrBadMAC: the packet's MAC matches none of the keyring's keys.
	ErrBadMAC = errors.New("bad packet MAC")
	// ErrInvalidMessage is returned by Encode for a message that cannot be
	// encoded: a field over its bound, a missing node id, an unknown type.
	ErrInvalidMessage = errors.New("invalid message")
)

// Reasons, the values Reason returns; stable, for metrics labels.
const (
	ReasonMalformed   = "malformed"
	ReasonBadMagic    = "bad_magic"
	ReasonBadVersion  = "bad_version"
	ReasonUnknownType = "unknown_type"
	ReasonUnsigned    = "unsigned"
	ReasonBadMAC      = "bad_mac"
	ReasonOther       = "other"
)

var reasons = []struct {
	err    error
	reason string
}{
	{ErrMalformed, ReasonMalformed},
	{ErrBadMagic, ReasonBadMagic},
	{ErrBadVersion, ReasonBadVersion},
	{ErrUnknownType, ReasonUnknownType},
	{ErrUnsigned, ReasonUnsigned},
	{ErrBadMAC, ReasonBadMAC},
}

// Reasons returns every label Reason can return for a Decode error, so
// metrics can export each counter from zero.
func Reasons() []string {
	out := make([]string, 0, len(reasons)+1)
	for _, r := range reasons {
		out = append(out, r.reason)
	}
	return append(out, ReasonOther)
}

// Reason classifies a Decode error into a short label for drop counters:
// one of the Reason* constants, "" for a nil error and ReasonOther for an
// error that is not Decode's.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return ReasonOther
}
