package protocol

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
)

// Quorum mode (Config.ClusterSize > 0): all of its bookkeeping lives in
// one quorumTracker, which the Node consults at exactly three points:
//
//  1. may I vote or ack?  mayGrant — before every VOTE and every ACK;
//  2. have I won?         won      — when a vote arrives and when the claim
//     window ends;
//  3. may I act?          mayAct   — in CanActAsLeader, and on every leader
//     tick (a leader that may not act steps down).
//
// Safety argument (docs/protocol.md, "Quorum mode", says it at length): a
// node that VOTEs for a claim or ACKs a heartbeat grants (term, candidate)
// and, on its own clock, grants nothing to anyone else for Promise from that
// moment. A leader's lease runs from the *send* time of the claim or
// heartbeat a majority answered, for Lease = 4/5 of Promise. Any majority
// that could elect a rival shares a node with the majority that granted
// the lease; that node answered after the leader sent and grants no other
// candidate until Promise after answering, so the lease ends before a
// rival can be elected — as long as clock rates differ by less than 25 %
// (we document 20 %; Lease/Promise = 4/5 is that margin). A grant is bound
// to one (term, candidate): a second candidate that claims the same term
// (two ids colliding on the 16-bit tag) is refused.
//
// A node that starts may have granted something in a previous life, so it
// holds a start-up promise for Promise. Without a state file it binds to
// nobody and refuses votes and acks alike. With one, it binds to the
// (term, candidate) of the last grant saved (Durable.Grant), which the
// adapter writes whenever the binding changes and before the VOTE or ACK
// that makes it leaves: whatever the previous life granted last is on disk,
// and any grant it made earlier was superseded by it. Granting that
// candidate again, at that term or later, is what the previous life's
// promise allowed; everyone else waits the full Promise, as without a state
// file. So a restarted follower keeps acking its leader at once.

// grant is a promise in force: until `until`, vote or ack for nobody but
// (term, to) and the same node's later terms. to == "" is the start-up
// promise without a state file, which binds to nobody.
type grant struct {
	term  uint64
	to    string
	until time.Time
}

// quorumTracker holds quorum-mode state. Its zero size means quorum mode
// is off: every question then answers yes.
type quorumTracker struct {
	size    int
	promise time.Duration
	lease   time.Duration

	// Voter side: the grant in force (our own claim included: a candidate
	// grants itself).
	granted grant

	// Candidate side: our claim's term, when it was first sent, and who
	// voted for it.
	claimTerm   uint64
	claimSentAt time.Time
	votes       map[string]bool

	// Leader side: send time of recent heartbeats by sequence, and per
	// follower the send time of the newest heartbeat it acked.
	sentAt     map[uint64]time.Time
	ackedAt    map[string]time.Time
	leaseUntil time.Time
	// sentVer is the payload version each recent heartbeat carried;
	// ackedVer, per follower, the highest version it acked (commit.go).
	sentVer  map[uint64]uint64
	ackedVer map[string]uint64

	// failed counts claims in a row that ended without a majority; the
	// next claim backs off Interval × 2^failed (bounded). Reset when a
	// leader is heard or we win.
	failed int

	// heard is the number of distinct node ids (ourselves included) heard
	// within ForgetPeerAfter, updated by the Node; above size the cluster
	// is misconfigured and nobody may act.
	heard int
	// heardIDs are those ids, sorted (for the misconfiguration report).
	heardIDs []string
	// announceAt is when an overfull node next broadcasts a QUERY, so
	// that every node hears its id (followers are otherwise silent to
	// each other) and the misconfiguration stays visible to all.
	announceAt time.Time

	// lost is set when a claim found no majority or a lease ran out, and
	// cleared when a leader is heard or elected: "no majority" for logs.
	lost bool
	// lostReach is how many nodes (ourselves included) answered when the
	// majority was lost.
	lostReach int
}

// newQuorumTracker starts with the start-up promise, bound to resumed (the
// last binding saved in a previous life; zero: nobody).
func newQuorumTracker(t Timings, size int, now time.Time, resumed Grant) quorumTracker {
	q := quorumTracker{size: size, promise: t.Promise, lease: t.Lease}
	if size > 0 {
		// We may have promised something in a previous life.
		q.granted = grant{term: resumed.Term, to: resumed.To, until: now.Add(t.Promise)}
	}
	return q
}

// binding is the grant's (term, candidate), saved in Durable. It outlives
// the grant's expiry and release: any later grant replaces it, so the
// binding on disk is always the last one made.
func (q *quorumTracker) binding() Grant { return Grant{Term: q.granted.term, To: q.granted.to} }

// on reports whether quorum mode is on.
func (q *quorumTracker) on() bool { return q.size > 0 }

// majority is the number of votes or acks (self included) that count.
func (q *quorumTracker) majority() int { return q.size/2 + 1 }

// overfull reports more distinct node ids heard than the cluster size.
func (q *quorumTracker) overfull() bool { return q.on() && q.heard > q.size }

// mayGrant is question 1: may this node vote for candidate's claim of term,
// or ack candidate's heartbeat of term? While a grant is in force only the
// same candidate is answered, at the same or a later term (a node abandons
// its earlier claim, or has lost its lease, before it claims again).
func (q *quorumTracker) mayGrant(now time.Time, term uint64, candidate string) bool {
	if !q.on() {
		return true
	}
	if q.overfull() {
		return false
	}
	g := q.granted
	if !now.Before(g.until) {
		return true
	}
	return g.to != "" && g.to == candidate && term >= g.term
}

// grant records a vote or ack for (term, candidate): binding for Promise.
func (q *quorumTracker) grant(now time.Time, term uint64, candidate string) {
	q.granted = grant{term: term, to: candidate, until: now.Add(q.promise)}
}

// grantedUntil is when the grant in force ends (zero if none).
func (q *quorumTracker) grantedUntil() time.Time { return q.granted.until }

// release ends the grant to (term, to) early: that candidate abandoned the
// claim or its leader resigned, and will never act under term.
func (q *quorumTracker) release(term uint64, to string) {
	if q.granted.to != "" && q.granted.to == to && q.granted.term == term {
		q.granted.until = time.Time{}
	}
}

// startClaim records our own claim of term, first sent now: we vote for
// ourselves, so the claim is a grant like any other.
func (q *quorumTracker) startClaim(now time.Time, term uint64, self string) {
	q.claimTerm, q.claimSentAt = term, now
	q.votes = make(map[string]bool)
	if q.on() {
		q.grant(now, term, self)
	}
}

// addVote counts voter's vote for our claim of term. Votes arriving later
// than Lease after the claim was sent could not give a lease any more.
func (q *quorumTracker) addVote(now time.Time, voter string, term uint64) {
	if term != q.claimTerm || !now.Before(q.claimSentAt.Add(q.lease)) {
		return
	}
	q.votes[voter] = true
}

// won is question 2: have a majority (ourselves included) voted for our
// claim? Without quorum mode a claim is won by surviving its window.
func (q *quorumTracker) won() bool {
	if !q.on() {
		return true
	}
	return !q.overfull() && len(q.votes)+1 >= q.majority()
}

// reachable is how many nodes (ourselves included) answered lately: the
// votes of the last claim, or the acks within the lease while leading.
func (q *quorumTracker) reachable(now time.Time, leading bool) int {
	if !leading {
		return len(q.votes) + 1
	}
	k := 1
	for _, at := range q.ackedAt {
		if now.Before(at.Add(q.lease)) {
			k++
		}
	}
	return k
}

// startLease begins the leadership won by the votes for our claim: the
// lease runs from the claim's send time.
func (q *quorumTracker) startLease() {
	q.sentAt = make(map[uint64]time.Time)
	q.ackedAt = make(map[string]time.Time)
	q.sentVer = make(map[uint64]uint64)
	q.ackedVer = make(map[string]uint64)
	q.leaseUntil = q.claimSentAt.Add(q.lease)
	if q.majority() <= 1 {
		q.leaseUntil = farFuture
	}
	q.failed, q.lost = 0, false
}

// mayAct is question 3: does the lease hold at now? Without quorum mode
// there is no lease.
func (q *quorumTracker) mayAct(now time.Time) bool {
	if !q.on() {
		return true
	}
	return !q.overfull() && now.Before(q.leaseUntil)
}

// leaseEnd is when mayAct turns false if no ack arrives (quorum mode only).
func (q *quorumTracker) leaseEnd() time.Time { return q.leaseUntil }

// sent remembers when heartbeat id was sent, for lease accounting.
func (q *quorumTracker) sent(id uint64, now time.Time) {
	if !q.on() {
		return
	}
	q.sentAt[id] = now
	if id > sentWindow {
		delete(q.sentAt, id-sentWindow)
		delete(q.sentVer, id-sentWindow)
	}
}

// acked records that from acked heartbeat id and extends the lease if a
// majority has acked heartbeats sent since.
func (q *quorumTracker) acked(from string, id uint64) {
	sent, ok := q.sentAt[id]
	if !ok {
		return
	}
	if sent.After(q.ackedAt[from]) {
		q.ackedAt[from] = sent
	}
	if v := q.sentVer[id]; v > q.ackedVer[from] {
		q.ackedVer[from] = v
	}
	if until := q.majoritySince().Add(q.lease); until.After(q.leaseUntil) {
		q.leaseUntil = until
	}
}

// majoritySince returns the latest send time t such that a majority
// (ourselves included) has acked a heartbeat sent at or after t: everything
// the leader sent before t (a payload version, say) has reached a majority.
// Zero if no majority has acked anything yet.
func (q *quorumTracker) majoritySince() time.Time {
	need := q.majority() - 1
	if need <= 0 {
		return farFuture
	}
	if len(q.ackedAt) < need {
		return time.Time{}
	}
	ts := make([]time.Time, 0, len(q.ackedAt))
	for _, t := range q.ackedAt {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return b.Compare(a) })
	return ts[need-1]
}

// claimFailed counts a claim that ended without a majority and returns how
// long to wait before the next attempt: Interval doubling per failure, at
// most maxClaimBackoff intervals, so a minority side costs a few packets
// per several intervals instead of two per interval.
func (q *quorumTracker) claimFailed(interval time.Duration) time.Duration {
	d := interval << min(q.failed, maxClaimBackoffShift)
	q.failed++
	return d
}

// loseMajority records that only reach nodes answered our claim or
// heartbeats.
func (q *quorumTracker) loseMajority(reach int) { q.lost, q.lostReach = true, reach }

// heardLeader resets the claim backoff: a leader exists, so the next
// failure is news.
func (q *quorumTracker) heardLeader() { q.failed, q.lost = 0, false }

// maxClaimBackoffShift bounds the failed-claim backoff at 2^4 = 16
// intervals (3.2 s at the default interval).
const maxClaimBackoffShift = 4

// sentWindow bounds how many recent heartbeats' send times a leader keeps;
// acks of older heartbeats no longer matter for the lease.
const sentWindow = 64

// farFuture is a lease that never ends (a one-node quorum).
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// The Node's side: where the three questions are asked and the answers
// sent.

// vote answers m's claim: a VOTE if we may grant it, else counted as
// refused.
func (n *Node) vote(now time.Time, m *Message) {
	if !n.q.mayGrant(now, m.Term, m.From) {
		n.stats.VotesRefused++
		return
	}
	n.q.grant(now, m.Term, m.From)
	n.stats.VotesGranted++
	n.emit(m.From, Message{Type: Vote, Term: m.Term, Leader: m.From, Payload: n.payload})
}

// ack answers an accepted heartbeat of our leader, renewing its lease and
// our grant, if we may grant it.
func (n *Node) ack(now time.Time, m *Message) {
	if !n.q.mayGrant(now, m.Term, m.From) {
		n.stats.AcksRefused++
		return
	}
	n.q.grant(now, m.Term, m.From)
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], m.Seq)
	n.emit(m.From, Message{Type: Ack, Term: m.Term, Leader: m.From, Payload: seq[:]})
}

// abandonClaim releases the grant a candidate made to its own claim: it
// will never lead with that term, so it may vote for others at once.
func (n *Node) abandonClaim() { n.q.release(n.claimTerm, n.cfg.NodeID) }

// stepVote counts a vote for our claim. The claim is decided when its
// window ends (tick.go), as without quorum: a node that knows a newer
// leader term has that long to correct us, so terms keep growing across
// leaders even when a majority restarted and forgot them.
func (n *Node) stepVote(now time.Time, m *Message) {
	if n.role != election.Candidate || m.Term != n.claimTerm || m.Leader != n.cfg.NodeID {
		return
	}
	n.q.addVote(now, m.From, m.Term)
}

// stepAck records that m.From acked one of our heartbeats.
func (n *Node) stepAck(m *Message) {
	if n.role != election.Leader || m.Term != n.leader.Term || m.Leader != n.cfg.NodeID || len(m.Payload) != 8 {
		return
	}
	n.q.acked(m.From, binary.BigEndian.Uint64(m.Payload))
}
