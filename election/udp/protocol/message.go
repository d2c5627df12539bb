package protocol

import "fmt"

// Type is a message type. Values go on the wire: only append to this list,
// never renumber or reuse a value.
type Type uint8

const (
	// Heartbeat is sent by the leader to all, every interval, and at once
	// when it hears a claim. Leader is the sender.
	Heartbeat Type = 1
	// Claim is sent by a candidate to all: "I lead term Term unless someone
	// better objects."
	Claim Type = 2
	// Resign is sent by a leader that is stopping. Successor, if not empty,
	// names the node that should take over at once.
	Resign Type = 3
	// Query asks "who leads?"; the leader answers with Answer.
	Query Type = 4
	// Answer is the leader's reply to Query. Leader is the sender.
	Answer Type = 5
	// Vote grants a claim in quorum mode. Leader names the candidate.
	Vote Type = 6
	// Ack acknowledges a heartbeat in quorum mode. Leader names the leader.
	Ack Type = 7
)

// String returns the type's name as used in logs and metrics labels.
func (t Type) String() string {
	switch t {
	case Heartbeat:
		return "heartbeat"
	case Claim:
		return "claim"
	case Resign:
		return "resign"
	case Query:
		return "query"
	case Answer:
		return "answer"
	case Vote:
		return "vote"
	case Ack:
		return "ack"
	default:
		return fmt.Sprintf("type(%d)", uint8(t))
	}
}

// Message is one protocol message. The wire codec (package wire) encodes
// every field except Addr.
type Message struct {
	// Type is the message type.
	Type Type
	// Cluster is the cluster name; nodes ignore other clusters' messages.
	Cluster string
	// From is the sender's node id.
	From string
	// Incarnation is chosen by the sender at process start; a new
	// incarnation means the sender restarted.
	Incarnation uint64
	// Seq strictly increases with every message one incarnation sends.
	Seq uint64
	// Term is the sender's current term.
	Term uint64
	// Priority is the sender's priority; higher wins ties on term.
	Priority uint8
	// Flags carries per-type bits; undefined bits must be zero when sent
	// and ignored when received.
	Flags uint8
	// Leader is the leader the message speaks of (see each Type).
	Leader string
	// Successor is the node a resigning leader hands over to (Resign only).
	Successor string
	// Payload is opaque application state the leader piggybacks on
	// heartbeats (the job ledger). Bounded by the codec.
	Payload []byte

	// Addr is the sender's network address as seen by the receiver. It is
	// set by the transport on receipt and is not encoded.
	Addr string
}
