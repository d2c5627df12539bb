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
//
// A node that still runs jobs after its leadership ended (SetHolding) keeps
// sending its Ledger on each heartbeat of the leader it follows, marked
// FlagHolding, for as long as it holds; when it stops, it sends it at once,
// unmarked, and again on each heartbeat for Timings.Hold: the leader knows
// the runs are still going, and hears their outcome at once, or from a
// repeat if that packet was lost, before its hold of the runs lapses (a
// lapsed run counts as interrupted and may be rerun).

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
	// Holding is set when the message carried FlagHolding: the sender,
	// not leading, still runs the runs its payload names as its own (the
	// job ledger marks them held, run by run; nothing is read from a
	// term). A Claim, Vote or Ledger without it says the sender runs none;
	// other messages say nothing of its runs (SpeaksOfHolds).
	Holding bool
	// Payload is the sender's application state; owned by the caller.
	Payload []byte
}

// Payloads returns and forgets the payloads received since the last call, in
// order. Every accepted message that carries application state is
// included (not Ack, whose payload is a sequence number).
func (n *Node) Payloads() []PeerPayload { return take(&n.payloads) }

// queuePayload queues m's payload for Payloads.
func (n *Node) queuePayload(m *Message) {
	if len(m.Payload) == 0 || m.Type == Ack || m.Type == Query {
		return
	}
	if len(n.payloads) >= maxPayloads {
		n.payloads = n.payloads[1:]
	}
	n.payloads = append(n.payloads, PeerPayload{From: m.From, Type: m.Type, Term: m.Term,
		Holding: m.Flags&FlagHolding != 0 && carriesOwnPayload(m.Type), Payload: append([]byte(nil), m.Payload...)})
}

// SpeaksOfHolds reports whether p's message says whether its sender holds
// runs: a Claim, Vote or Ledger, marked (Holding) or not. A leader's
// messages (Heartbeat, Answer, Resign) do not: a leader's runs are its own
// business, and a holder that leads again still runs its runs, so the
// absence of the mark there is no release.
func (p PeerPayload) SpeaksOfHolds() bool { return carriesOwnPayload(p.Type) }

// carriesOwnPayload reports whether messages of type t carry the sender's
// own payload as a non-leader: the types FlagHolding is defined on.
func carriesOwnPayload(t Type) bool { return t == Claim || t == Vote || t == Ledger }

// SetHolding says whether this node still runs jobs (the job runner's
// runs in progress). While it holds and does not lead, its claims, votes
// and Ledger messages carry FlagHolding, and it sends its Ledger on each
// heartbeat of the leader it follows, not only during the gathering
// window. When holding changes, a node that does not lead sends its Ledger
// at once, so the leader hears the runs' outcome without waiting. Set the
// payload (SetPayload) first: the message carries it.
func (n *Node) SetHolding(now time.Time, holding bool) {
	if holding == n.holding {
		return
	}
	n.holding = holding
	if n.role == election.Leader || n.quiet || len(n.payload) == 0 {
		return
	}
	if now.After(n.now) {
		n.now = now
	}
	if !holding {
		// The outcome is repeated on the leader's heartbeats (handOver)
		// for as long as the leader would wait for it.
		n.handoverUntil = later(n.handoverUntil, n.now.Add(n.t.Hold))
	}
	n.emit("", Message{Type: Ledger, Leader: n.leader.ID, Payload: n.payload})
}

// Holding reports what SetHolding last set.
func (n *Node) Holding() bool { return n.holding }

// handOver sends our payload to the leadership we follow: at once when it
// is new to us, then on each of its heartbeats while its gathering window
// may still be open, while we hold runs, or for Timings.Hold after we
// stopped holding them.
func (n *Node) handOver(now time.Time, m *Message, newLeadership bool) {
	if newLeadership {
		n.handoverUntil = later(n.handoverUntil, now.Add(n.t.Gather))
	} else if m.Type != Heartbeat || !now.Before(n.handoverUntil) && !n.holding {
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
// far as this leader can make it, and this node may act on it at now:
// without quorum, once a heartbeat carrying it (or a later version) has
// been sent; in quorum mode, once a majority, this node included,
// acknowledged such heartbeats of this leadership. A new leader elected by
// a majority hears the payload in one of the votes. It is the gate a job
// run passes before it starts, so it is false whenever CanActAsLeader(now)
// is: a leader that stalled past its lease and handles a queued ACK before
// its next Tick still leads, and the ACK still counts, but nothing may
// start on a lease that ended.
func (n *Node) Committed(now time.Time, ver uint64) bool {
	if ver > n.sentVer || !n.CanActAsLeader(now) {
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

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
