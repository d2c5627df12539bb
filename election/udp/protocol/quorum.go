package protocol

import (
	"encoding/binary"
	"time"

	"github.com/lanleader/lanleader/election"
)

// Quorum mode (Config.ClusterSize > 0): all of its bookkeeping lives in
// one quorumTracker, which the Node consults at exactly three points:
//
//  1. may I vote or ack?  mayGrant — before every VOTE and every ACK;
//  2. have I won?         won      — when a vote arrives and when the claim
//     window ends;
//  3. may I act?          mayAct   — in CanActAsLeader (and so in
//     Committed, a job run's gate), and on every leader tick (a leader
//     that may not act steps down).
//
// Safety argument (docs/protocol.md, "Quorum mode", says it at length): a
// node that VOTEs for a claim or ACKs a heartbeat grants (term, candidate)
// and, on its own clock, grants nothing to anyone else for its promise P_i
// from that moment; the VOTE or ACK says P_i (Message.Promise), and a
// grant never shortens one in force. P_i adapts to the loss the node
// measures (quorum_promise.go), so it differs between nodes and between
// grants of one node. Each grant i answered something the leader sent at
// s_i (its clock), so it supports the lease until
//
//	e_i = s_i + 4/5 × P_i
//
// (a grant that does not say P_i, from an older node, counts as the
// leader's shortest promise, and one longer than the leader's longest
// counts as that). The lease holds until the latest t such that a
// majority, the leader included, has grants with e_i ≥ t: the
// (majority-1)-th latest e_i of distinct granters. Any majority that could
// elect a rival shares a node i with that majority. If i is another node,
// it answered after s_i and grants no rival until s_i + P_i on its own
// clock, while the lease ends by s_i + 4/5 × P_i on the leader's — before,
// as long as clock rates differ by less than 25 % (we document 20 %; 4/5
// is that margin). If i is the leader itself, it votes for a rival only as
// a follower, after it stopped leading: when its lease ran out, when it
// followed a better leader, or after it resigned — never while it may
// act. So nodes whose promises differ, by loss or by config (a rolling
// change of interval or misses), never give a lease longer than the
// shortest promise of the majority that counts. A grant is bound to one
// (term, candidate): a second candidate that claims the same term (two
// ids colliding on the 16-bit tag) is refused.
//
// A node that starts may have granted something in a previous life, so it
// holds a start-up promise. Without a state file it binds to nobody and
// lasts the longest promise this config can make (Timings.MaxPromise): it
// refuses votes and acks alike (a previous life with a longer config is
// not covered: operations.md says to keep such a node down for its old
// longest promise). With one, it binds to the (term, candidate) of the
// last grant saved (Durable.Grant), which the adapter writes whenever the
// binding changes and before the VOTE or ACK that makes it leaves, and
// lasts the promise saved with it (Grant.Promise: at least what was left
// of the grant in force when it was saved, hold below): whatever the
// previous life granted last is on disk, and any grant it made earlier was
// superseded by it. Granting that candidate again, at that term or later,
// is what the previous life's promise allowed; everyone else waits the
// full start-up promise. So a restarted follower keeps acking its leader,
// and one restarted with a shorter promise keeps the longer one it made
// before.

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
	size int
	// promise is this node's own promise, P: what its next grant says.
	// It adapts to the loss measured (quorum_promise.go) between minK and
	// maxK intervals: between minPromise and maxPromise.
	promise                time.Duration
	minK, maxK             int
	minPromise, maxPromise time.Duration

	// Voter side: the grant in force (our own claim included: a candidate
	// grants itself).
	granted grant
	// hold is the promise a restart must keep (Grant.Promise): at least
	// what is left of the grants in force (granted.until − now) at any
	// time. It rises with a grant that needs more, before that grant
	// leaves (the binding changes, so the state file is saved first), and
	// falls to our promise only once every longer grant has run out:
	// holdUntil is the end of the longest one known to be left.
	hold      time.Duration
	holdUntil time.Time

	// Candidate side: our claim's term, when it was first sent, and who
	// voted for it, with the promise each vote said.
	claimTerm   uint64
	claimSentAt time.Time
	votes       map[string]time.Duration

	// Leader side: send time of recent heartbeats by sequence, and per
	// follower the end of the lease its grants support (e_i above), the
	// promise its latest grant said and the send time of the latest
	// heartbeat (or claim) it answered.
	sentAt       map[uint64]time.Time
	ackedUntil   map[string]time.Time
	ackedPromise map[string]time.Duration
	ackedSent    map[string]time.Time
	leaseUntil   time.Time
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
// last binding saved in a previous life; zero: nobody) for the longer of
// our shortest promise and the one saved with it. With nothing saved (no
// state file, or one of a life that never granted) the previous life may
// have promised anything up to our longest promise: the start-up promise
// lasts that long.
func newQuorumTracker(t Timings, size int, now time.Time, resumed Grant) quorumTracker {
	q := quorumTracker{size: size, promise: t.Promise, minPromise: t.Promise, maxPromise: t.MaxPromise,
		minK: int(t.Promise / t.Interval), maxK: int(t.MaxPromise / t.Interval)}
	if size > 0 {
		// We may have promised something in a previous life.
		q.hold = max(t.Promise, resumed.Promise)
		if resumed == (Grant{}) {
			q.hold = t.MaxPromise
		}
		q.holdUntil = now.Add(q.hold)
		q.granted = grant{term: resumed.Term, to: resumed.To, until: q.holdUntil}
	}
	return q
}

// binding is the grant's (term, candidate) and the promise a restart must
// keep, saved in Durable. It outlives the grant's expiry and release: any
// later grant replaces it, so the binding on disk is always the last one
// made.
func (q *quorumTracker) binding() Grant {
	return Grant{Term: q.granted.term, To: q.granted.to, Promise: q.hold}
}

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

// grant records a vote or ack for (term, candidate), binding for our
// promise from now, and returns that promise. A promise still in force
// is never shortened: a grant may only be made while the one in force is
// to the same candidate or over, a longer one made earlier (our promise
// fell since, or the start-up promise of a restart) still ends when it
// said, and hold keeps covering it.
func (q *quorumTracker) grant(now time.Time, term uint64, candidate string) time.Duration {
	q.granted = grant{term: term, to: candidate, until: later(q.granted.until, now.Add(q.promise))}
	switch need := q.granted.until.Sub(now); {
	case need > q.hold:
		q.hold, q.holdUntil = need, q.granted.until
	case !now.Before(q.holdUntil):
		// The grant that set hold ran out. Fall to our promise once no
		// longer grant is left (need is then this grant's), else wait
		// for the end of the longest one left.
		q.holdUntil = q.granted.until
		if need == q.promise {
			q.hold = need
		}
	}
	return q.promise
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
	q.votes = make(map[string]time.Duration)
	if q.on() {
		q.grant(now, term, self)
	}
}

// addVote counts voter's vote for our claim of term, which promised
// promise. A vote arriving after the lease it supports from the claim's
// send time could not give a lease any more.
func (q *quorumTracker) addVote(now time.Time, voter string, term uint64, promise time.Duration) {
	if term != q.claimTerm || !now.Before(q.claimSentAt.Add(q.leaseFor(promise))) {
		return
	}
	q.votes[voter] = promise
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
	for _, until := range q.ackedUntil {
		if now.Before(until) {
			k++
		}
	}
	return k
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

// The Node's side: where the three questions are asked and the answers
// sent.

// vote answers m's claim: a VOTE if we may grant it, else counted as
// refused.
func (n *Node) vote(now time.Time, m *Message) {
	promise, ok := n.grantFor(now, m, &n.stats.VotesRefused)
	if !ok {
		return
	}
	n.stats.VotesGranted++
	n.emit(m.From, Message{Type: Vote, Term: m.Term, Leader: m.From, Promise: promise, Payload: n.payload})
}

// ack answers an accepted heartbeat of our leader, renewing its lease and
// our grant, if we may grant it.
func (n *Node) ack(now time.Time, m *Message) {
	promise, ok := n.grantFor(now, m, &n.stats.AcksRefused)
	if !ok {
		return
	}
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], m.Seq)
	n.emit(m.From, Message{Type: Ack, Term: m.Term, Leader: m.From, Promise: promise, Payload: seq[:]})
}

// grantFor grants m's sender our promise for m's term, the one rule of a
// VOTE and an ACK, and returns the promise; if we may not grant it (a twin
// of our id was heard, or mayGrant says no) it counts one more refusal in
// refused and returns false.
func (n *Node) grantFor(now time.Time, m *Message, refused *uint64) (promise time.Duration, ok bool) {
	if n.twinned() || !n.q.mayGrant(now, m.Term, m.From) {
		*refused++
		return 0, false
	}
	n.adaptPromise()
	return n.q.grant(now, m.Term, m.From), true
}

// abandonClaim releases the grant a candidate made to its own claim: it
// will never lead with that term, so it may vote for others at once.
func (n *Node) abandonClaim() { n.q.release(n.claimTerm, n.cfg.NodeID) }

// notePromise remembers the promise m, a VOTE or ACK addressed to us, said
// (Quorum().Differing).
func (n *Node) notePromise(m *Message) {
	if p := n.peers[m.From]; p != nil && m.Leader == n.cfg.NodeID && m.Promise != 0 {
		p.promise = m.Promise
	}
}

// stepVote counts a vote for our claim. The claim is decided when its
// window ends (tick.go), as without quorum: a node that knows a newer
// leader term has that long to correct us, so terms keep growing across
// leaders even when a majority restarted and forgot them.
func (n *Node) stepVote(now time.Time, m *Message) {
	n.notePromise(m)
	if n.role != election.Candidate || m.Term != n.claimTerm || m.Leader != n.cfg.NodeID {
		return
	}
	n.q.addVote(now, m.From, m.Term, m.Promise)
}

// stepAck records that m.From acked one of our heartbeats.
func (n *Node) stepAck(m *Message) {
	n.notePromise(m)
	if n.role != election.Leader || m.Term != n.leader.Term || m.Leader != n.cfg.NodeID || len(m.Payload) != 8 {
		return
	}
	n.q.acked(m.From, binary.BigEndian.Uint64(m.Payload), m.Promise)
}
