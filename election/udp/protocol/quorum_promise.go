package protocol

import (
	"math"
	"time"
)

// The promise a voter grants adapts to the loss it measures, as the
// failure detector's threshold does (heartbeat.Detector), and for the same
// reason: a lease that loss alone lets lapse is a leader change nobody
// asked for. Each VOTE and ACK says the promise it makes (Message.Promise)
// and the leader's lease follows what was granted (quorum_lease.go), so the
// voters and the leader agree on it without sharing a config.
//
// A grant answering a heartbeat sent at s supports the lease until
// s + 4/5 × P. The leader heartbeats every interval I, so the heartbeats
// that can renew that support before it ends are those sent at s + jI with
// jI < 4/5 × P: chances(k) = ⌈4k/5⌉ − 1 of them for P = k × I. This voter's
// support lapses only if each of them, or its ACK, is lost: with loss p
// each way that is q^chances, q = 1 − (1−p)². The promise is the smallest
// k in [PromiseMisses, max(PromiseMisses, MaxMisses)] with
// q^chances(k) ≤ LossTarget — the target the detector keeps for a live
// leader looking dead — so on a loss-free link it is PromiseMisses and on a
// lossy one it grows, costing a slower failover (the voters' grants to a
// dead leader run out later), as the detector's threshold does. The lease
// of a majority lapses only when several voters' support lapses at once.
//
// p is the detector's estimate (heartbeat.Detector.Loss), a decayed count
// over about 1000 heartbeats. The promise rises as soon as the estimate
// asks for more, and falls only once the estimate is a quarter below what
// the longer promise needed, so an estimate that hovers at a boundary does
// not change the promise — and save the state file — at every heartbeat.

// promiseMisses is the promise, in intervals, for a measured loss p: the
// smallest k in [minK, maxK] with q^chances(k) ≤ target, maxK if none is.
func promiseMisses(p float64, minK, maxK int, target float64) int {
	if maxK <= minK || !(p > 0) {
		return minK
	}
	q := 1 - (1-p)*(1-p) // a heartbeat or its ack lost
	for k := minK; k < maxK; k++ {
		if math.Pow(q, float64(chances(k))) <= target {
			return k
		}
	}
	return maxK
}

// chances is how many heartbeats after the one a grant answered can renew
// its support before the lease it supports, 4/5 of k intervals, ends:
// ⌈4k/5⌉ − 1.
func chances(k int) int { return (4*k+4)/5 - 1 }

// promiseFalls is how much lower the loss estimate must be than one that
// asks for the current promise before the promise falls.
const promiseFalls = 0.75

// adaptPromise sets this node's promise from the detector's loss estimate
// (the opening comment): at once when the estimate asks for a longer one,
// only with a margin when it allows a shorter one. Called before every
// grant.
func (n *Node) adaptPromise() {
	q := &n.q
	if !q.on() || q.maxK <= q.minK {
		return
	}
	at := func(p float64) time.Duration {
		return time.Duration(promiseMisses(p, q.minK, q.maxK, n.cfg.LossTarget)) * n.t.Interval
	}
	loss := n.det.Loss()
	if up := at(loss); up > q.promise {
		q.promise = up
	} else if down := at(loss / promiseFalls); down < q.promise {
		q.promise = down
	}
}

// mayPromise reports whether a node with our config could promise p: a
// whole number of intervals between our shortest and longest promise.
func (q *quorumTracker) mayPromise(p, interval time.Duration) bool {
	return p%interval == 0 && p >= q.minPromise && p <= q.maxPromise
}
