package wire

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

func fullMessage() protocol.Message {
	return protocol.Message{
		Type:        protocol.Resign,
		Cluster:     "backup-rack",
		From:        "nas-1",
		Incarnation: 0x0102030405060708,
		Seq:         42,
		Term:        7,
		Priority:    200,
		Flags:       0x81,
		Beat:        9,
		Nonce:       0xfeedface,
		Heard:       protocol.Evidence{Term: 5, Beat: 3},
		Leader:      "nas-1",
		Successor:   "mini-2",
		Payload:     []byte("ledger"),
	}
}

func maxMessage() protocol.Message {
	id := strings.Repeat("é", MaxIDLen/2) // multi-byte UTF-8 at the byte bound
	return protocol.Message{
		Type: protocol.Heartbeat, Cluster: id, From: id, Leader: id, Successor: id,
		Incarnation: ^uint64(0), Seq: ^uint64(0), Term: ^uint64(0), Priority: 255, Flags: 255,
		Beat: ^uint64(0), Nonce: ^uint64(0), Heard: protocol.Evidence{Term: ^uint64(0), Beat: ^uint64(0)},
		Payload: bytes.Repeat([]byte{0xAB}, MaxPayload),
	}
}

// promiseMessage is an ACK: it carries a promise in the nonce slot.
func promiseMessage() protocol.Message {
	return protocol.Message{Type: protocol.Ack, Cluster: "c", From: "n1", Incarnation: 1, Seq: 2, Term: 3,
		Leader: "n2", Promise: 600 * time.Millisecond, Payload: []byte{0, 0, 0, 0, 0, 0, 0, 9}}
}

func testKeyring(t testing.TB, keys ...string) *Keyring {
	t.Helper()
	var bs [][]byte
	for _, k := range keys {
		bs = append(bs, []byte(strings.Repeat(k, MinKeyLen)[:MinKeyLen]))
	}
	k, err := NewKeyring(bs...)
	require.NoError(t, err)
	return k
}

func TestRoundTrip(t *testing.T) {
	signed := testKeyring(t, "a")
	tests := []struct {
		name string
		msg  protocol.Message
		k    *Keyring
	}{
		{"full unsigned", fullMessage(), nil},
		{"full signed", fullMessage(), signed},
		{"minimal", protocol.Message{Type: protocol.Query, From: "n"}, nil},
		{"max fields signed", maxMessage(), signed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for typ := protocol.Type(1); knownType(typ); typ++ {
				msg := tt.msg
				msg.Type = typ
				if carriesPromise(typ) { // the nonce slot carries the promise
					msg.Promise, msg.Nonce = time.Duration(msg.Nonce>>1), 0
				}
				if carriesSent(typ, msg.Flags) { // the beat slot carries the sent time
					msg.Sent, msg.Beat = int64(msg.Beat>>1), 0
				}
				msg.Addr = "10.0.0.1:7483" // not encoded
				b, err := Encode(msg, tt.k)
				require.NoError(t, err)
				assert.Len(t, b, EncodedSize(msg, tt.k))
				assert.LessOrEqual(t, len(b), MaxPacketSize)
				got, err := Decode(b, tt.k)
				require.NoError(t, err)
				msg.Addr = ""
				assert.Equal(t, msg, got)
			}
		})
	}
}

func TestMaxPacketSizeFitsDatagram(t *testing.T) {
	b, err := Encode(maxMessage(), testKeyring(t, "a"))
	require.NoError(t, err)
	assert.Equal(t, MaxPacketSize, len(b), "MaxPacketSize must be what the largest message takes")
	assert.LessOrEqual(t, MaxPacketSize, 1400)
}

// TestLayout pins the byte layout documented in docs/wire.md: a change here
// is a wire format change and needs a new Version.
func TestLayout(t *testing.T) {
	b, err := Encode(fullMessage(), nil)
	require.NoError(t, err)
	want := []byte("LNLD")
	want = append(want, 2, byte(protocol.Resign), AuthNone)
	want = append(want, 11)
	want = append(want, "backup-rack"...)
	want = append(want, 5)
	want = append(want, "nas-1"...)
	want = append(want, 1, 2, 3, 4, 5, 6, 7, 8)
	want = binary.BigEndian.AppendUint64(want, 42)
	want = binary.BigEndian.AppendUint64(want, 7)
	want = append(want, 200, 0x81)
	want = binary.BigEndian.AppendUint64(want, 9)
	want = binary.BigEndian.AppendUint64(want, 0xfeedface)
	want = binary.BigEndian.AppendUint64(want, 5)
	want = binary.BigEndian.AppendUint64(want, 3)
	want = append(want, 5)
	want = append(want, "nas-1"...)
	want = append(want, 6)
	want = append(want, "mini-2"...)
	want = append(want, 0, 6)
	want = append(want, "ledger"...)
	assert.Equal(t, want, b)
}

// TestPromiseInTheNonceSlot pins where VOTE and ACK carry Promise: in
// nanoseconds, in the slot a nonce has in other types, which VOTE and ACK
// never used. A node that does not know the field (Promise zero: not
// said) reads it as a nonce and ignores it, so the layout and Version
// stay.
func TestPromiseInTheNonceSlot(t *testing.T) {
	for _, typ := range []protocol.Type{protocol.Vote, protocol.Ack} {
		m := promiseMessage()
		m.Type = typ
		b, err := Encode(m, nil)
		require.NoError(t, err)
		slot := offVersion + 3 + 1 + len(m.Cluster) + 1 + len(m.From) + 3*8 + 2 + 8
		assert.Equal(t, uint64(600_000_000), binary.BigEndian.Uint64(b[slot:]), "%s: the promise in ns", typ)
		got, err := Decode(b, nil)
		require.NoError(t, err)
		assert.Equal(t, m, got)
		assert.Zero(t, got.Nonce)

		binary.BigEndian.PutUint64(b[slot:], 0)
		old, err := Decode(b, nil)
		require.NoError(t, err)
		assert.Zero(t, old.Promise, "%s from a node that does not say its promise", typ)

		binary.BigEndian.PutUint64(b[slot:], 1<<63)
		_, err = Decode(b, nil)
		assert.Equal(t, ReasonMalformed, Reason(err), "%s: a promise beyond a duration's range", typ)
	}
	q := protocol.Message{Type: protocol.Query, From: "n1", Nonce: 1 << 63}
	b, err := Encode(q, nil)
	require.NoError(t, err)
	got, err := Decode(b, nil)
	require.NoError(t, err)
	assert.Equal(t, q, got, "other types keep the whole slot for the nonce")
}

// TestSentOnTheWire pins where the sender's wall clock (Sent, Unix
// nanoseconds) travels: a node's report QUERY in the beat slot, which no
// QUERY used before (an old node ignores it there, and sends 0: not said).
// A report keeps its nonce slot: a witness's answer to `who` echoes the
// client's nonce there. Any other QUERY, and a HEARTBEAT, keep their slots
// as they were.
func TestSentOnTheWire(t *testing.T) {
	const sent = int64(1_795_000_000_123_456_789)
	beatSlot := offVersion + 3 + 1 + 1 + 2 + 3*8 + 2 // empty cluster, From "n1"
	for _, tc := range []struct {
		m    protocol.Message
		slot int
	}{
		{protocol.Message{Type: protocol.Query, From: "n2", Leader: "n1", Flags: protocol.FlagReport, Sent: sent}, beatSlot},
		{protocol.Message{Type: protocol.Query, From: "n3", Leader: "n1", Flags: protocol.FlagReport | protocol.FlagWitness,
			Nonce: 1<<63 | 5, Sent: sent}, beatSlot},
	} {
		m := tc.m
		b, err := Encode(m, nil)
		require.NoError(t, err)
		assert.Equal(t, uint64(sent), binary.BigEndian.Uint64(b[tc.slot:]), "%s: Sent in ns", m.Type)
		got, err := Decode(b, nil)
		require.NoError(t, err)
		assert.Equal(t, m, got)

		binary.BigEndian.PutUint64(b[tc.slot:], 0)
		old, err := Decode(b, nil)
		require.NoError(t, err)
		assert.Zero(t, old.Sent, "%s from a node that does not say its clock", m.Type)
		assert.Equal(t, m.Nonce, old.Nonce)

		binary.BigEndian.PutUint64(b[tc.slot:], 1<<63)
		_, err = Decode(b, nil)
		assert.Equal(t, ReasonMalformed, Reason(err), "%s: a time beyond int64", m.Type)
	}
	for _, q := range []protocol.Message{
		{Type: protocol.Query, From: "n1", Nonce: 1 << 63, Beat: 0},
		{Type: protocol.Query, From: "c", Flags: protocol.FlagClient | protocol.FlagReport, Nonce: 7, Payload: make([]byte, 192)},
		{Type: protocol.Heartbeat, From: "n1", Leader: "n1", Term: 1 << 24, Beat: 3},
	} {
		b, err := Encode(q, nil)
		require.NoError(t, err)
		got, err := Decode(b, nil)
		require.NoError(t, err)
		assert.Equal(t, q, got, "other messages keep their slots")
	}
}

func TestAppendEncodeKeepsPrefix(t *testing.T) {
	k := testKeyring(t, "a")
	dst := []byte("prefix")
	b, err := AppendEncode(dst, fullMessage(), k)
	require.NoError(t, err)
	assert.Equal(t, "prefix", string(b[:6]))
	got, err := Decode(b[6:], k)
	require.NoError(t, err)
	assert.Equal(t, fullMessage(), got, "the MAC must cover the packet only, not dst's prefix")
}

func TestEncodeRejects(t *testing.T) {
	long := strings.Repeat("x", MaxIDLen+1)
	tests := []struct {
		name string
		edit func(m *protocol.Message)
		want string
	}{
		{"unknown type", func(m *protocol.Message) { m.Type = 0 }, "unknown type"},
		{"appended type not yet known", func(m *protocol.Message) { m.Type = 200 }, "unknown type"},
		{"empty From", func(m *protocol.Message) { m.From = "" }, "From (node id) is empty"},
		{"long Cluster", func(m *protocol.Message) { m.Cluster = long }, "Cluster"},
		{"long From", func(m *protocol.Message) { m.From = long }, "From"},
		{"long Leader", func(m *protocol.Message) { m.Leader = long }, "Leader"},
		{"long Successor", func(m *protocol.Message) { m.Successor = long }, "Successor"},
		{"invalid UTF-8", func(m *protocol.Message) { m.Leader = "\xff" }, "not valid UTF-8"},
		{"big Payload", func(m *protocol.Message) { m.Payload = make([]byte, MaxPayload+1) }, "Payload is 1025 bytes, max 1024"},
		{"Promise on RESIGN", func(m *protocol.Message) { m.Promise = time.Second }, "Promise is carried by VOTE and ACK only"},
		{"Nonce on ACK", func(m *protocol.Message) { m.Type = protocol.Ack }, "Nonce is not carried by ack"},
		{"negative Promise", func(m *protocol.Message) { m.Type, m.Nonce, m.Promise = protocol.Vote, 0, -1 }, "Promise -1ns is negative"},
		{"Sent on RESIGN", func(m *protocol.Message) { m.Sent = 1 }, "Sent is carried by a node's report QUERY only"},
		{"Sent on HEARTBEAT", func(m *protocol.Message) { m.Type, m.Nonce, m.Sent = protocol.Heartbeat, 0, 1 }, "Sent is carried by a node's report QUERY only"},
		{"negative Sent", func(m *protocol.Message) {
			m.Type, m.Flags, m.Beat, m.Sent = protocol.Query, protocol.FlagReport, 0, -1
		}, "Sent -1 is negative"},
		{"Beat on a report", func(m *protocol.Message) { m.Type, m.Flags, m.Beat = protocol.Query, protocol.FlagReport, 2 }, "Beat is not carried by a report query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fullMessage()
			tt.edit(&m)
			_, err := Encode(m, nil)
			require.ErrorIs(t, err, ErrInvalidMessage)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestKnownTypesMatchProtocol fails when package protocol appends a message
// type that the codec does not list in knownType yet.
func TestKnownTypesMatchProtocol(t *testing.T) {
	for i := 0; i < 256; i++ {
		typ := protocol.Type(i)
		named := !strings.HasPrefix(typ.String(), "type(")
		assert.Equal(t, named, knownType(typ), "type %d (%s): protocol and codec disagree", i, typ)
	}
}

func TestDecodeRejects(t *testing.T) {
	k := testKeyring(t, "a")
	other := testKeyring(t, "b")
	unsigned, err := Encode(fullMessage(), nil)
	require.NoError(t, err)
	signed, err := Encode(fullMessage(), k)
	require.NoError(t, err)
	wrongKey, err := Encode(fullMessage(), other)
	require.NoError(t, err)

	edit := func(b []byte, f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), b...))
	}
	tests := []struct {
		name   string
		pkt    []byte
		k      *Keyring
		reason string
	}{
		{"empty", nil, nil, ReasonBadMagic},
		{"not lanleader", []byte("GET / HTTP/1.1\r\n\r\n"), nil, ReasonBadMagic},
		{"magic only", []byte("LNLD"), nil, ReasonMalformed},
		{"future version", edit(unsigned, func(b []byte) []byte { b[4] = 3; return b }), nil, ReasonBadVersion},
		{"unknown type", edit(unsigned, func(b []byte) []byte { b[5] = 99; return b }), nil, ReasonUnknownType},
		{"type zero", edit(unsigned, func(b []byte) []byte { b[5] = 0; return b }), nil, ReasonUnknownType},
		{"unknown auth scheme", edit(unsigned, func(b []byte) []byte { b[6] = 7; return b }), nil, ReasonMalformed},
		{"truncated", unsigned[:len(unsigned)-1], nil, ReasonMalformed},
		{"header only", unsigned[:minPacketSize-1], nil, ReasonMalformed},
		{"trailing byte", append(append([]byte(nil), unsigned...), 0), nil, ReasonMalformed},
		{"too long", append(append([]byte(nil), unsigned...), make([]byte, MaxPacketSize)...), nil, ReasonMalformed},
		{"cluster length over bound", edit(unsigned, func(b []byte) []byte { b[7] = MaxIDLen + 1; return b }), nil, ReasonMalformed},
		{"cluster length past end", edit(unsigned, func(b []byte) []byte { b[7] = 60; return b }), nil, ReasonMalformed},
		{"payload length over bound", edit(unsigned, func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[len(b)-8:], MaxPayload+1)
			return b
		}), nil, ReasonMalformed},
		{"empty node id", func() []byte {
			b := []byte("LNLD\x02\x01\x00\x00\x00")
			b = append(b, make([]byte, numbersSize+4)...)
			return b
		}(), nil, ReasonMalformed},
		{"invalid UTF-8 id", edit(unsigned, func(b []byte) []byte { b[8] = 0xff; return b }), nil, ReasonMalformed},
		{"unsigned with keyring", unsigned, k, ReasonUnsigned},
		{"wrong key", wrongKey, k, ReasonBadMAC},
		{"tampered field", edit(signed, func(b []byte) []byte { b[30]++; return b }), k, ReasonBadMAC},
		{"tampered MAC", edit(signed, func(b []byte) []byte { b[len(b)-1]++; return b }), k, ReasonBadMAC},
		{"MAC stripped, auth byte kept", signed[:len(signed)-MACSize], k, ReasonBadMAC},
		{"MAC stripped, auth byte cleared", edit(signed[:len(signed)-MACSize], func(b []byte) []byte { b[6] = AuthNone; return b }), k, ReasonUnsigned},
		{"signed too short for MAC", edit(unsigned[:minPacketSize], func(b []byte) []byte { b[6] = AuthHMACSHA256; return b }), nil, ReasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.pkt, tt.k)
			require.Error(t, err)
			assert.Equal(t, tt.reason, Reason(err), "error: %v", err)
			assert.Zero(t, m, "a rejected packet yields no message")
		})
	}
}

func TestDecodeSignedWithoutKeyring(t *testing.T) {
	b, err := Encode(fullMessage(), testKeyring(t, "a"))
	require.NoError(t, err)
	m, err := Decode(b, nil)
	require.NoError(t, err, "a node without keys accepts signed packets unchecked")
	assert.Equal(t, fullMessage(), m)
}

func TestDecodeDoesNotAliasInput(t *testing.T) {
	b, err := Encode(fullMessage(), nil)
	require.NoError(t, err)
	m, err := Decode(b, nil)
	require.NoError(t, err)
	for i := range b {
		b[i] = 0
	}
	assert.Equal(t, fullMessage(), m)
}

func TestZeroKeyringIsAnErrorNotAPanic(t *testing.T) {
	_, err := Encode(fullMessage(), &Keyring{})
	assert.ErrorContains(t, err, "keyring has no keys")
	signed, err := Encode(fullMessage(), testKeyring(t, "a"))
	require.NoError(t, err)
	_, err = Decode(signed, &Keyring{})
	assert.ErrorIs(t, err, ErrBadMAC)
}

func TestReasons(t *testing.T) {
	assert.ElementsMatch(t, []string{"malformed", "bad_magic", "bad_version", "unknown_type", "unsigned", "bad_mac", "other"}, Reasons())
}

func TestReason(t *testing.T) {
	assert.Equal(t, "", Reason(nil))
	assert.Equal(t, ReasonOther, Reason(assert.AnError))
	assert.Equal(t, ReasonBadMAC, Reason(ErrBadMAC))
}
