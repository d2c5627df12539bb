package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Decode parses and, when k is not nil, authenticates one packet. With a
// keyring, a packet without a MAC fails with ErrUnsigned and one whose MAC
// matches none of k's keys with ErrBadMAC; without one (k == nil), a signed
// packet is accepted without checking its MAC, since this node does not
// authenticate anything. Other errors wrap ErrMalformed, ErrBadMagic,
// ErrBadVersion or ErrUnknownType; Reason classifies them.
//
// Decode never panics, never keeps a reference to b and allocates at most
// the strings and payload it returns. Addr is left empty for the caller.
func Decode(b []byte, k *Keyring) (protocol.Message, error) {
	var m protocol.Message
	if len(b) < len(Magic) || [4]byte(b[:4]) != Magic {
		return m, ErrBadMagic
	}
	if len(b) <= offVersion {
		return m, fmt.Errorf("%w: %d bytes, no version", ErrMalformed, len(b))
	}
	if b[offVersion] != Version {
		return m, fmt.Errorf("%w %d (this node speaks %d)", ErrBadVersion, b[offVersion], Version)
	}
	if len(b) > MaxPacketSize {
		return m, fmt.Errorf("%w: %d bytes, max %d", ErrMalformed, len(b), MaxPacketSize)
	}
	if len(b) < minPacketSize {
		return m, fmt.Errorf("%w: %d bytes, min %d", ErrMalformed, len(b), minPacketSize)
	}
	body := b
	switch b[offAuth] {
	case AuthNone:
		if k != nil {
			return m, ErrUnsigned
		}
	case AuthHMACSHA256:
		if len(b) < minPacketSize+MACSize {
			return m, fmt.Errorf("%w: %d bytes, too short for a MAC", ErrMalformed, len(b))
		}
		body = b[:len(b)-MACSize]
		if k != nil && !k.verify(body, b[len(body):]) {
			return m, ErrBadMAC
		}
	default:
		return m, fmt.Errorf("%w: unknown auth scheme %d", ErrMalformed, b[offAuth])
	}
	m.Type = protocol.Type(b[offType])
	if !knownType(m.Type) {
		return protocol.Message{}, fmt.Errorf("%w %d", ErrUnknownType, b[offType])
	}
	if err := decodeBody(&m, body); err != nil {
		return protocol.Message{}, err
	}
	return m, nil
}

// decodeBody parses the fields after the header. Length checks guard every
// read, so a short or lying packet ends in ErrMalformed, not a panic.
func decodeBody(m *protocol.Message, b []byte) error {
	r := reader{b: b, off: headerSize}
	cluster := r.str()
	from := r.str()
	m.Incarnation = r.u64()
	m.Seq = r.u64()
	m.Term = r.u64()
	m.Priority = r.u8()
	m.Flags = r.u8()
	m.Beat = r.u64()
	nonce := r.u64()
	m.Heard.Term = r.u64()
	m.Heard.Beat = r.u64()
	leader := r.str()
	successor := r.str()
	payload := r.bytes(int(r.u16()), MaxPayload)
	if r.err != nil {
		return r.err
	}
	if r.off != len(b) {
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b)-r.off)
	}
	if len(from) == 0 {
		return fmt.Errorf("%w: empty node id", ErrMalformed)
	}
	switch {
	case !carriesPromise(m.Type):
		m.Nonce = nonce
	case nonce > math.MaxInt64:
		return fmt.Errorf("%w: promise of %d ns does not fit a duration", ErrMalformed, nonce)
	default:
		m.Promise = time.Duration(nonce)
	}
	if carriesSent(m.Type, m.Flags) {
		if m.Beat > math.MaxInt64 {
			return fmt.Errorf("%w: sent time of %d ns does not fit a time", ErrMalformed, m.Beat)
		}
		m.Sent, m.Beat = int64(m.Beat), 0
	}
	// One allocation for all four strings: they are short and live as long
	// as the message.
	var buf [4 * MaxIDLen]byte
	all := append(append(append(append(buf[:0], cluster...), from...), leader...), successor...)
	if !utf8.Valid(all) {
		return fmt.Errorf("%w: id or cluster name is not valid UTF-8", ErrMalformed)
	}
	s := string(all)
	m.Cluster, s = s[:len(cluster)], s[len(cluster):]
	m.From, s = s[:len(from)], s[len(from):]
	m.Leader, m.Successor = s[:len(leader)], s[len(leader):]
	if len(payload) > 0 {
		m.Payload = append([]byte(nil), payload...)
	}
	return nil
}

// reader reads big-endian fields from b, recording the first error and
// returning zero values after it.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n > len(r.b)-r.off {
		r.err = fmt.Errorf("%w: truncated at byte %d (need %d more, have %d)", ErrMalformed, r.off, n, len(r.b)-r.off)
		return false
	}
	return true
}

func (r *reader) u8() uint8 { return readInt(r, 1, func(b []byte) uint8 { return b[0] }) }

func (r *reader) u16() uint16 { return readInt(r, 2, binary.BigEndian.Uint16) }

func (r *reader) u64() uint64 { return readInt(r, 8, binary.BigEndian.Uint64) }

// readInt reads the next n bytes of r as an integer with get; zero once r
// failed.
func readInt[T uint8 | uint16 | uint64](r *reader, n int, get func([]byte) T) T {
	if !r.need(n) {
		return 0
	}
	v := get(r.b[r.off:])
	r.off += n
	return v
}

// bytes returns the next n bytes (aliasing b), rejecting n over max.
func (r *reader) bytes(n, max int) []byte {
	if r.err != nil {
		return nil
	}
	if n > max {
		r.err = fmt.Errorf("%w: length %d at byte %d, max %d", ErrMalformed, n, r.off, max)
		return nil
	}
	if !r.need(n) {
		return nil
	}
	v := r.b[r.off : r.off+n]
	r.off += n
	return v
}

// str returns the next length-prefixed string's bytes (aliasing b).
func (r *reader) str() []byte {
	return r.bytes(int(r.u8()), MaxIDLen)
}

// Signed reports whether b looks like a lanleader packet that carries a MAC
// (its auth byte is AuthHMACSHA256), without checking anything else. A node
// without a keyring uses it to notice that its peers sign: the two sides
// are configured differently.
func Signed(b []byte) bool {
	return len(b) > offAuth && [4]byte(b[:4]) == Magic && b[offAuth] == AuthHMACSHA256
}
