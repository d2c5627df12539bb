package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// Handover of application state (the job ledger) to a new leader.
//
// A new leader decides what its predecessors missed (a misfire run, the
// rerun of an interrupted run) from the ledgers it holds. A follower that
// missed the old leader's last heartbeats would decide wrongly, so a new
// leader gathers first: every node that starts following a new leadership
// (a deposed leader too) broadcasts a Ledger message with its payload, and
// again on each heartbeat of that leadership for GatherWindow, so one lost
// packet does not lose the handover. Claims and votes carry the sender's
// payload as well. The application sees every payload heard (Payloads) and
// decides after the gathering window; instants due later are not delayed.

// maxPayloads bounds the queue of payloads Payloads returns, should the caller
// never drain it.
const maxPayloads = 64

// PeerPayload is a payload received from another node.
type PeerPayload struct {
	// From is the sender's node id.
	From string
	// Type is the message that carried it.
	Type Type
	// Term is the message's term: the leadership's for Heartbeat, Answer
	// and Resign, the claim's for Claim and Vote, the sender's highest seen
	// for Ledger.
	Term uint64
	// Payload is the sender's application state; owned by the caller.
	Payload []byte
}

// Payloads returns and forgets the payloads received since the last call, in
// order. Every accepted message that carries application state is
// included (not Ack, whose payload is a sequence number).
func (n *Node) Payloads() []PeerPayload {
	h := n.payloads
	n.payloads = nil
	return h
}

// queuePayload queues m's payload for Payloads.
func (n *Node) queuePayload(m *Message) {
	if len(m.Payload) == 0 || m.Type == Ack || m.Type == Query {
		return
	}
	if len(n.payloads) >= maxPayloads {
		n.payloads = n.payloads[1:]
	}
	n.payloads = append(n.payloads, PeerPayload{From: m.From, Type: m.Type, Term: m.Term, Payload: append([]byte(nil), m.Payload...)})
}

// handOver sends our payload to the leadership we follow: at once when it
// is new to us, then on each of its heartbeats while its gathering window
// may still be open.
func (n *Node) handOver(now time.Time, m *Message, newLeadership bool) {
	if newLeadership {
		n.handoverUntil = now.Add(n.t.Gather)
	} else if m.Type != Heartbeat || !now.Before(n.handoverUntil) {
		return
	}
	if len(n.payload) == 0 {
		return
	}
	n.emit("", Message{Type: Ledger, Leader: m.From, Payload: n.payload})
}

// GatherWindow returns how long a new leader gathers its peers' ledgers
// before it decides what its predecessors missed.
func (n *Node) GatherWindow() time.Duration { return n.t.Gather }

// PayloadVersion returns the version of the current payload: it grows by
// one whenever SetPayload or Publish changes the payload.
func (n *Node) PayloadVersion() uint64 { return n.payloadVer }

// Committed reports whether payload version ver is held by the cluster as
// far as this leader can make it: without quorum, once a heartbeat carrying
// it (or a later version) has been sent; in quorum mode, once a majority,
// this node included, acknowledged such heartbeats of this leadership. A
// new leader elected by a majority hears the payload in one of the votes.
// It is false whenever this node does not lead.
func (n *Node) Committed(ver uint64) bool {
	if n.role != election.Leader || n.quiet || ver > n.sentVer {
		return false
	}
	return n.q.committed(ver)
}

// recordVersion remembers the payload version the heartbeat just sent
// (n.seq) carried.
func (n *Node) recordVersion() {
	n.sentVer = n.payloadVer
	n.q.sentVersion(n.seq, n.payloadVer)
}

// sentVersion records the payload version heartbeat id carried (quorum
// mode), for committed.
func (q *quorumTracker) sentVersion(id, ver uint64) {
	if q.on() {
		q.sentVer[id] = ver
	}
}

// committed reports whether a majority (ourselves included) acked
// heartbeats of this leadership carrying payload version ver or later.
// Always true without quorum.
func (q *quorumTracker) committed(ver uint64) bool {
	if !q.on() || q.majority() <= 1 {
		return true
	}
	count := 1
	for _, v := range q.ackedVer {
		if v >= ver {
			count++
		}
	}
	return count >= q.majority()
}
