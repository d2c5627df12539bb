package protocol

import "time"

// retryAt is when a leader whose latest heartbeat went out at last, and
// whose next is due at next and every every after, heartbeats again before
// its schedule to save its lease; zero if it need not.
//
// A lease lapses only when every heartbeat that could renew it, or its
// acks, were lost. The adaptive promise makes that rare, but with three
// voters (two servers and a witness) either follower's support renews it,
// and at 20 % loss, where the promise reaches its cap, both still lapsed
// together about once in three simulated days. So once the lease would end
// before the heartbeat after next could renew it (the heartbeat at next is
// its last chance) and the latest heartbeat has not been answered by a
// majority within wait (a claim window, a few round trips), the leader
// heartbeats again, and again every wait, until a majority answers one or
// the lease ends. Where each heartbeat is answered, nothing is resent,
// however short the lease (misses 2 leaves less than two intervals);
// under loss the last stretch of a lease gets a chance every claim window
// instead of one per interval. A resent heartbeat is a heartbeat like any
// other: the grants that answer it are what the lease rests on.
func (q *quorumTracker) retryAt(last, next time.Time, every, wait time.Duration) time.Time {
	if !q.on() || !q.leaseUntil.Before(next.Add(every)) || q.majorityAnswered(last) {
		return time.Time{}
	}
	return last.Add(wait)
}

// majorityAnswered reports whether a majority, the leader included, has
// answered a heartbeat (or the claim) sent at sent or later.
func (q *quorumTracker) majorityAnswered(sent time.Time) bool {
	k := 1
	for _, s := range q.ackedSent {
		if !s.Before(sent) {
			k++
		}
	}
	return k >= q.majority()
}

// leaseRetryAt is when this leader heartbeats again, before its schedule,
// to save a lease at risk (quorumTracker.retryAt); zero if it need not.
func (n *Node) leaseRetryAt(now time.Time) time.Time {
	return n.q.retryAt(n.lastBeat, n.nextBeat, n.beatEvery(now), n.t.ClaimWindow)
}
