package protocol

import (
	"fmt"
	"time"
)

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
	// Ledger hands a node's application state (Payload: the job ledger it
	// holds, its own and what it heard) to a new leader, which gathers
	// such ledgers before it decides what its predecessors missed. Sent,
	// broadcast, by every node that starts following a new leadership
	// (a deposed leader included) and again on each heartbeat of that
	// leader during its gathering window. Leader names the new leader.
	Ledger Type = 8
	// Trigger is a client's request to the leader (`lanleader trigger`):
	// FlagClient set, Nonce random, Payload the application's request,
	// padded to ClientQueryPad. It is handled like a client Query
	// (clientquery.go) and handed to the application (ClientRequests).
	Trigger Type = 9
	// TriggerAnswer is the leader's reply to a Trigger: Nonce echoed,
	// Payload the application's answer. Only clients consume it.
	TriggerAnswer Type = 10
	// Probe is a follower's question to its leader, unicast, when a
	// heartbeat is late: "are you alive?" (probe.go). Leader and Term
	// name the leadership probed; Nonce numbers the probe.
	Probe Type = 11
	// ProbeAnswer is a leader's reply to a Probe of its leadership: Term
	// its term, Nonce the probe's, Leader empty and no payload, so it is
	// smaller than the probe.
	ProbeAnswer Type = 12
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
	case Ledger:
		return "ledger"
	case Trigger:
		return "trigger"
	case TriggerAnswer:
		return "trigger_answer"
	case Probe:
		return "probe"
	case ProbeAnswer:
		return "probe_answer"
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
	// Flags carries per-type bits (and FlagIsolated on any type); undefined
	// bits must be zero when sent and ignored when received.
	Flags uint8
	// Beat numbers a leader's heartbeats: it grows by one with every
	// Heartbeat one incarnation sends and is zero in other types. The
	// failure detector counts gaps in Beat, not in Seq, so messages a leader
	// sends to one node (an Answer) are not mistaken for lost heartbeats.
	Beat uint64
	// Nonce is chosen at random by a client Query and echoed by the Answer,
	// so a client accepts only answers to its own question. Zero elsewhere.
	Nonce uint64
	// Promise (Vote and Ack only) is the grant's promise: from sending it,
	// the sender votes and acks for nobody but Leader for Promise, on its
	// own clock. The leader's lease follows the promises it was granted.
	// Each grant says its own, so it may differ between grants of one
	// node. Zero: not said (a node older than this field). It travels in
	// the wire slot Nonce has in other types; zero elsewhere.
	Promise time.Duration
	// Sent (Query with FlagReport: a follower's report to its leader) is
	// the sender's wall clock when it sent the message, in Unix
	// nanoseconds; zero: not said (a node older than this field). The core
	// neither sets nor reads it: the adapter stamps it as it sends and the
	// leader measures the follower's clock offset from it (package udp,
	// clockoffset.go). It travels in the wire slot Beat has in a
	// Heartbeat, which a Query never used; zero elsewhere.
	Sent int64
	// Heard is the sender's evidence that it hears the cluster: the newest
	// leader heartbeat it accepted from another node. Zero if none.
	Heard Evidence
	// Leader is the leader the message speaks of (see each Type).
	Leader string
	// Successor is the node a resigning leader hands over to (Resign only).
	Successor string
	// Payload is opaque application state (the job ledger): a leader's on
	// Heartbeat, Answer and Resign, the sender's on Claim, Vote and Ledger;
	// on Ack the acked heartbeat's sequence number. Bounded by the codec.
	Payload []byte

	// Addr is the sender's network address as seen by the receiver. It is
	// set by the transport on receipt and is not encoded.
	Addr string
}

// Evidence names one leader heartbeat by the leader's term and the
// heartbeat's Beat. A node that carries fresh evidence of a leader's
// heartbeats shows it hears that leader (see docs/protocol.md, "Two-way
// evidence").
type Evidence struct {
	// Term is the term of the leader heard; zero means nothing heard.
	Term uint64
	// Beat is the Beat of the newest heartbeat heard from that leader.
	Beat uint64
}
