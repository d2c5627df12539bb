package protocol

import (
	"maps"
	"slices"
	"time"
)

// The lease: how long the grants of a majority let a leader act (the
// arithmetic is in quorum.go's opening comment), and how often it
// heartbeats to keep it.

// leaseFor is how long after the send time of what it answered a grant
// that promised p supports the lease: 4/5 of p, or of our shortest
// promise when p is not said (a node older than the field: its promise
// was fixed, and ours is what the config gives), and of our longest when
// p is longer: a voter that promises more than we ever would has timing
// other than ours, and we count on nothing we would not promise.
func (q *quorumTracker) leaseFor(p time.Duration) time.Duration {
	switch {
	case p <= 0:
		p = q.minPromise
	case p > q.maxPromise:
		p = q.maxPromise
	}
	return leaseOf(p)
}

// startLease begins the leadership won by the votes for our claim: the
// lease runs from the claim's send time for as long as the votes of a
// majority support it.
func (q *quorumTracker) startLease() {
	q.sentAt = make(map[uint64]time.Time)
	q.ackedUntil = make(map[string]time.Time)
	q.ackedPromise = make(map[string]time.Duration)
	q.ackedSent = make(map[string]time.Time)
	q.sentVer = make(map[uint64]uint64)
	q.ackedVer = make(map[string]uint64)
	for voter, p := range q.votes {
		q.ackedUntil[voter], q.ackedPromise[voter] = q.claimSentAt.Add(q.leaseFor(p)), p
		q.ackedSent[voter] = q.claimSentAt
	}
	q.leaseUntil = q.majorityUntil(slices.Collect(maps.Values(q.ackedUntil)))
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

// acked records that from acked heartbeat id, promising promise, and
// extends the lease if a majority's acks now support a later end.
func (q *quorumTracker) acked(from string, id uint64, promise time.Duration) {
	sent, ok := q.sentAt[id]
	if !ok {
		return
	}
	if end := sent.Add(q.leaseFor(promise)); end.After(q.ackedUntil[from]) {
		q.ackedUntil[from] = end
	}
	q.ackedPromise[from] = promise
	if sent.After(q.ackedSent[from]) {
		q.ackedSent[from] = sent
	}
	if v := q.sentVer[id]; v > q.ackedVer[from] {
		q.ackedVer[from] = v
	}
	if until := q.majorityUntil(slices.Collect(maps.Values(q.ackedUntil))); until.After(q.leaseUntil) {
		q.leaseUntil = until
	}
}

// pace is how often a leader heartbeats: every interval, or, when a grant
// that still holds its lease promised less than beats intervals (the
// granter's timing is shorter), every that promise over beats — as often
// as that node expects, or the lease it grants would run out between two
// heartbeats — but never more often than floor. beats is min(Misses,
// paceBeats): with equal timing every promise spans at least that many
// intervals, so the pace is the interval.
func (q *quorumTracker) pace(now time.Time, interval time.Duration, beats int, floor time.Duration) time.Duration {
	p := time.Duration(beats) * interval
	for id, pr := range q.ackedPromise {
		if pr > 0 && pr < p && now.Before(q.ackedUntil[id]) {
			p = pr
		}
	}
	return max(floor, p/time.Duration(beats))
}

// paceBeats is how many heartbeats a leader sends at least per promise
// granted to it: three, the default Misses (the lease, 4/5 of it, then
// survives one lost round).
const paceBeats = 3

// majorityUntil returns, of ends (one per granter other than us), the
// latest time t such that a majority, ourselves included, supports the
// lease until t or later: the (majority-1)-th latest. Zero if too few.
func (q *quorumTracker) majorityUntil(ends []time.Time) time.Time {
	need := q.majority() - 1
	if need <= 0 {
		return farFuture
	}
	if len(ends) < need {
		return time.Time{}
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return b.Compare(a) })
	return ends[need-1]
}

// sentWindow bounds how many recent heartbeats' send times a leader keeps;
// acks of older heartbeats no longer matter for the lease.
const sentWindow = 64

// farFuture is a lease that never ends (a one-node quorum).
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
