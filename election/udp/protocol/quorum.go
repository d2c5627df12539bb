package protocol

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
)

// Quorum mode (Config.ClusterSize > 0).
//
// Safety argument: a node that VOTEs for a claim or ACKs a heartbeat
// promises, on its own monotonic clock, not to vote for any other claim for
// promise() = PromiseMisses×Interval (default Misses×Interval) from that
// moment. A leader's lease runs from
// the *send* time of the claim or heartbeat that a majority answered, for
// lease() = 4/5 of promise(). Any majority that could elect a rival shares
// a node with the majority that granted the lease; that node answered after
// the leader sent, and refuses to vote until promise() after answering, so
// the lease ends before the rival can be elected — as long as clocks run at
// rates within 20 % of each other. A node that starts keeps the promise it
// may have made in its previous life: it votes for nobody for promise().

// quorum reports whether quorum mode is on.
func (n *Node) quorum() bool { return n.cfg.ClusterSize > 0 }

// majority is the number of votes or acks (self included) that count.
func (n *Node) majority() int { return n.cfg.ClusterSize/2 + 1 }

func (n *Node) promise() time.Duration {
	return time.Duration(n.cfg.PromiseMisses) * n.cfg.Interval
}

func (n *Node) lease() time.Duration { return n.promise() * 4 / 5 }

// promised reports whether a promise in force forbids voting for claim
// term of node from. A promise binds to one node: the same node's later
// claim is fine, because a node abandons its previous claim (or has lost
// its lease and stepped down) before it claims again, and never acts under
// the older term afterwards.
func (n *Node) promised(now time.Time, term uint64, from string) bool {
	if !now.Before(n.promiseUntil) || term == n.promisedTerm {
		return false
	}
	return !(from == n.promisedTo && term > n.promisedTerm)
}

func (n *Node) promiseTo(now time.Time, term uint64, to string) {
	n.promisedTerm, n.promisedTo = term, to
	n.promiseUntil = now.Add(n.promise())
}

// vote grants m's claim if no promise to another term is in force.
func (n *Node) vote(now time.Time, m *Message) {
	if n.promised(now, m.Term, m.From) {
		n.stats.VotesRefused++
		return
	}
	n.promiseTo(now, m.Term, m.From)
	n.stats.VotesGranted++
	n.emit(m.From, Message{Type: Vote, Term: m.Term, Leader: m.From})
}

// ack answers an accepted heartbeat of our leader, renewing its lease and
// our promise. A leader older than a term we promised to is not acked
// while that promise is in force.
func (n *Node) ack(now time.Time, m *Message) {
	if m.Term < n.promisedTerm && now.Before(n.promiseUntil) {
		return
	}
	n.promiseTo(now, m.Term, m.From)
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], m.Seq)
	n.emit(m.From, Message{Type: Ack, Term: m.Term, Leader: m.From, Payload: seq[:]})
}

// abandonClaim releases the promise a candidate made to its own claim: it
// will never lead with that term, so it may vote for others at once.
func (n *Node) abandonClaim() {
	if n.quorum() && n.promisedTerm == n.claimTerm {
		n.promiseUntil = time.Time{}
	}
}

// stepVote counts a vote for our claim; a majority makes us leader at once.
func (n *Node) stepVote(now time.Time, m *Message) {
	if n.role != election.Candidate || m.Term != n.claimTerm || m.Leader != n.cfg.NodeID {
		return
	}
	if !now.Before(n.claimSentAt.Add(n.lease())) {
		return // votes this old could not give a lease any more
	}
	n.votes[m.From] = true
	if len(n.votes)+1 >= n.majority() {
		n.lead(now)
	}
}

// stepAck records that m.From acked one of our heartbeats and extends the
// lease if a majority has acked since.
func (n *Node) stepAck(m *Message) {
	if n.role != election.Leader || m.Term != n.leader.Term || m.Leader != n.cfg.NodeID || len(m.Payload) != 8 {
		return
	}
	sent, ok := n.sentAt[binary.BigEndian.Uint64(m.Payload)]
	if !ok {
		return
	}
	if sent.After(n.ackedAt[m.From]) {
		n.ackedAt[m.From] = sent
	}
	// The (majority-1)-th most recent ack (we count ourselves) bounds the
	// instant by which a majority had answered.
	need := n.majority() - 1
	if need <= 0 || len(n.ackedAt) < need {
		return
	}
	ts := make([]time.Time, 0, len(n.ackedAt))
	for _, t := range n.ackedAt {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return b.Compare(a) })
	if until := ts[need-1].Add(n.lease()); until.After(n.leaseUntil) {
		n.leaseUntil = until
	}
}

// recordSent remembers when heartbeat seq was sent, for lease accounting.
func (n *Node) recordSent(now time.Time) {
	n.sentAt[n.seq] = now
	if n.seq > sentWindow {
		delete(n.sentAt, n.seq-sentWindow)
	}
}

// sentWindow bounds how many recent messages' send times a leader keeps;
// acks of older heartbeats no longer matter for the lease.
const sentWindow = 64

// startLease sets up lease accounting for a new leadership won by votes
// answering a claim first sent at claimSentAt.
func (n *Node) startLease() {
	n.sentAt = make(map[uint64]time.Time)
	n.ackedAt = make(map[string]time.Time)
	n.leaseUntil = n.claimSentAt.Add(n.lease())
	if n.majority() <= 1 {
		n.leaseUntil = farFuture
	}
}

// farFuture is a lease that never ends (a one-node quorum).
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
