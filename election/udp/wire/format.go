package wire

import "github.com/lanleader/lanleader/election/udp/protocol"

// Magic opens every lanleader packet: "LNLD". It lets a node tell stray
// traffic on its port from a lanleader packet it cannot read.
var Magic = [4]byte{'L', 'N', 'L', 'D'}

// Version is the wire format version this package writes and reads. A change
// of layout gets a new version; new message types do not (type values are
// append-only, see protocol.Type).
const Version = 2

// Auth schemes, the header byte that says whether a trailer follows. Only
// append to this list.
const (
	// AuthNone: no trailer.
	AuthNone = 0
	// AuthHMACSHA256: a MACSize-byte HMAC-SHA256 trailer over every byte
	// before it, keyed with one of the Keyring's keys.
	AuthHMACSHA256 = 1
)

// Size limits. MaxPacketSize is what a packet with every field at its
// maximum and a MAC takes; it stays below 1400 bytes so a packet fits in one
// Ethernet frame even with IP options or a tunnel's overhead.
const (
	// MaxIDLen bounds the cluster name and the node ids (From, Leader,
	// Successor), in bytes of UTF-8.
	MaxIDLen = 64
	// MaxPayload bounds Message.Payload, in bytes.
	MaxPayload = 1024
	// MACSize is the length of the HMAC-SHA256 trailer.
	MACSize = 32
	// MaxPacketSize is the largest packet Encode produces and Decode
	// accepts (1383 bytes).
	MaxPacketSize = headerSize + 4*(1+MaxIDLen) + numbersSize + 2 + MaxPayload + MACSize
)

const (
	// headerSize: magic (4), version, type, auth.
	headerSize = len(Magic) + 3
	// numbersSize: incarnation, seq, term (8 each), priority, flags, beat,
	// nonce, heard term, heard beat (8 each).
	numbersSize = 3*8 + 2 + 4*8
	// minPacketSize is the smallest well-formed unsigned packet: empty
	// cluster, a one-byte node id, empty leader, successor and payload.
	minPacketSize = headerSize + 1 + 1 + 1 + numbersSize + 1 + 1 + 2

	offVersion = 4
	offType    = 5
	offAuth    = 6
)

// knownType reports whether t is a message type this version understands.
// TestKnownTypesMatchProtocol fails if package protocol gains a type that is
// not listed here.
func knownType(t protocol.Type) bool {
	switch t {
	case protocol.Heartbeat, protocol.Claim, protocol.Resign, protocol.Query,
		protocol.Answer, protocol.Vote, protocol.Ack, protocol.Ledger,
		protocol.Trigger, protocol.TriggerAnswer, protocol.Probe, protocol.ProbeAnswer:
		return true
	}
	return false
}

// carriesPromise reports whether messages of type t carry Promise, in the
// slot that holds Nonce in the others: a node that does not know the
// field reads it as a nonce, which VOTE and ACK never had, and ignores it.
func carriesPromise(t protocol.Type) bool { return t == protocol.Vote || t == protocol.Ack }

// nonceSlot is what m puts in the nonce slot: Promise in nanoseconds for
// VOTE and ACK, Nonce otherwise.
func nonceSlot(m protocol.Message) uint64 {
	if carriesPromise(m.Type) {
		return uint64(m.Promise)
	}
	return m.Nonce
}

// carriesSent reports whether a message of type t with flags carries Sent
// (the sender's wall clock): a node's report QUERY (FlagReport, not a
// client's), in the beat slot, which a QUERY never used (its nonce slot is
// taken: a witness's answer to `who` is a report that echoes the client's
// nonce). A node that does not know the field ignores that slot there.
func carriesSent(t protocol.Type, flags uint8) bool {
	return t == protocol.Query && flags&protocol.FlagReport != 0 && flags&protocol.FlagClient == 0
}

// beatSlot is what m puts in the beat slot: Sent for a report QUERY, Beat
// otherwise.
func beatSlot(m protocol.Message) uint64 {
	if carriesSent(m.Type, m.Flags) {
		return uint64(m.Sent)
	}
	return m.Beat
}
