package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Encode returns m as a packet, signed with k's primary key when k is not
// nil. Every field of m except Addr is encoded. It fails with
// ErrInvalidMessage when a field is over its bound (MaxIDLen, MaxPayload),
// From is empty, a string is not valid UTF-8 or the type is unknown.
func Encode(m protocol.Message, k *Keyring) ([]byte, error) {
	return AppendEncode(make([]byte, 0, EncodedSize(m, k)), m, k)
}

// AppendEncode appends the packet for m to dst and returns the extended
// slice, like Encode but without allocating when dst has room.
func AppendEncode(dst []byte, m protocol.Message, k *Keyring) ([]byte, error) {
	if err := check(m); err != nil {
		return dst, err
	}
	if k != nil && len(k.keys) == 0 {
		return dst, errors.New("wire: encode: keyring has no keys; build it with NewKeyring or LoadKeyring")
	}
	start := len(dst)
	auth := byte(AuthNone)
	if k != nil {
		auth = AuthHMACSHA256
	}
	dst = append(dst, Magic[:]...)
	dst = append(dst, Version, byte(m.Type), auth)
	dst = appendString(dst, m.Cluster)
	dst = appendString(dst, m.From)
	dst = binary.BigEndian.AppendUint64(dst, m.Incarnation)
	dst = binary.BigEndian.AppendUint64(dst, m.Seq)
	dst = binary.BigEndian.AppendUint64(dst, m.Term)
	dst = append(dst, m.Priority, m.Flags)
	dst = binary.BigEndian.AppendUint64(dst, beatSlot(m))
	dst = binary.BigEndian.AppendUint64(dst, nonceSlot(m))
	dst = binary.BigEndian.AppendUint64(dst, m.Heard.Term)
	dst = binary.BigEndian.AppendUint64(dst, m.Heard.Beat)
	dst = appendString(dst, m.Leader)
	dst = appendString(dst, m.Successor)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(m.Payload)))
	dst = append(dst, m.Payload...)
	if k != nil {
		dst = k.appendMAC(dst, dst[start:])
	}
	return dst, nil
}

// EncodedSize returns the length of the packet Encode(m, k) produces.
func EncodedSize(m protocol.Message, k *Keyring) int {
	n := headerSize + 4 + len(m.Cluster) + len(m.From) + len(m.Leader) + len(m.Successor) +
		numbersSize + 2 + len(m.Payload)
	if k != nil {
		n += MACSize
	}
	return n
}

func appendString(dst []byte, s string) []byte {
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

// check reports why m cannot be encoded, naming the field.
func check(m protocol.Message) error {
	if !knownType(m.Type) {
		return fmt.Errorf("wire: encode: %w: unknown type %s", ErrInvalidMessage, m.Type)
	}
	if m.From == "" {
		return fmt.Errorf("wire: encode %s: %w: From (node id) is empty", m.Type, ErrInvalidMessage)
	}
	for _, f := range [...]struct{ name, v string }{
		{"Cluster", m.Cluster}, {"From", m.From}, {"Leader", m.Leader}, {"Successor", m.Successor},
	} {
		if len(f.v) > MaxIDLen {
			return fmt.Errorf("wire: encode %s: %w: %s %.20q... is %d bytes, max %d",
				m.Type, ErrInvalidMessage, f.name, f.v, len(f.v), MaxIDLen)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("wire: encode %s: %w: %s %q is not valid UTF-8", m.Type, ErrInvalidMessage, f.name, f.v)
		}
	}
	if len(m.Payload) > MaxPayload {
		return fmt.Errorf("wire: encode %s: %w: Payload is %d bytes, max %d",
			m.Type, ErrInvalidMessage, len(m.Payload), MaxPayload)
	}
	switch {
	case m.Promise < 0:
		return fmt.Errorf("wire: encode %s: %w: Promise %v is negative", m.Type, ErrInvalidMessage, m.Promise)
	case carriesPromise(m.Type) && m.Nonce != 0:
		return fmt.Errorf("wire: encode %s: %w: Nonce is not carried by %s (its slot holds Promise)", m.Type, ErrInvalidMessage, m.Type)
	case !carriesPromise(m.Type) && m.Promise != 0:
		return fmt.Errorf("wire: encode %s: %w: Promise is carried by VOTE and ACK only", m.Type, ErrInvalidMessage)
	case m.Sent < 0:
		return fmt.Errorf("wire: encode %s: %w: Sent %d is negative", m.Type, ErrInvalidMessage, m.Sent)
	case carriesSent(m.Type, m.Flags) && m.Beat != 0:
		return fmt.Errorf("wire: encode %s: %w: Beat is not carried by a report %s (its beat slot holds Sent)", m.Type, ErrInvalidMessage, m.Type)
	case !carriesSent(m.Type, m.Flags) && m.Sent != 0:
		return fmt.Errorf("wire: encode %s: %w: Sent is carried by a node's report QUERY only", m.Type, ErrInvalidMessage)
	}
	return nil
}
