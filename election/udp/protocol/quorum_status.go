package protocol

import (
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
)

// QuorumStatus is quorum mode's view for logs, metrics and /status.
type QuorumStatus struct {
	// Size is Config.ClusterSize; 0 means quorum mode is off and the other
	// fields are zero.
	Size int
	// Majority is Size/2+1.
	Majority int
	// Reachable is how many nodes (this one included) answered lately:
	// acks within the lease while leading, else the votes of the last
	// claim. Meaningful while Lost.
	Reachable int
	// Lost is true from a claim that found no majority, or a lease that
	// ran out, until a leader is heard or elected.
	Lost bool
	// Heard is how many distinct node ids (this one included) were heard
	// within ForgetPeerAfter; HeardIDs lists them, sorted.
	Heard    int
	HeardIDs []string
	// Witnesses are the ids of HeardIDs that are witnesses
	// (Config.Witness, FlagWitness), this node included if it is one.
	Witnesses []string
	// Overfull is Heard > Size: ClusterSize is too small for the nodes on
	// the LAN, and this node will not vote, ack or act as leader.
	Overfull bool
	// Promise is this node's own promise, what its next VOTE or ACK says:
	// it adapts to the loss this node measures between MinPromise
	// (PromiseMisses × Interval) and MaxPromise (max(PromiseMisses,
	// MaxMisses) × Interval).
	Promise, MinPromise, MaxPromise time.Duration
	// Differing lists, sorted by id, the nodes heard within
	// ForgetPeerAfter whose latest VOTE or ACK to this node promised what
	// this node's config never would: not a whole number of its intervals
	// between MinPromise and MaxPromise. Their interval or misses differ
	// from this node's. A lease follows the shortest promise granted
	// (quorum.go), so the cluster stays safe, but its timing is not what
	// the operator set. (A node whose interval is a multiple of this
	// one's may promise what loss could have made this node promise; it
	// is not listed.)
	Differing []PeerPromise
}

// PeerPromise is the promise a node's latest VOTE or ACK said.
type PeerPromise struct {
	ID      string
	Promise time.Duration
}

// Quorum returns quorum mode's current view.
func (n *Node) Quorum() QuorumStatus {
	q := &n.q
	if !q.on() {
		return QuorumStatus{}
	}
	reach := q.reachable(n.now, n.role == election.Leader)
	if q.lost {
		reach = q.lostReach
	}
	return QuorumStatus{
		Size:       q.size,
		Majority:   q.majority(),
		Reachable:  reach,
		Lost:       q.lost,
		Heard:      q.heard,
		HeardIDs:   slices.Clone(q.heardIDs),
		Witnesses:  n.witnesses(),
		Overfull:   q.overfull(),
		Promise:    q.promise,
		MinPromise: q.minPromise,
		MaxPromise: q.maxPromise,
		Differing:  n.differingPromises(),
	}
}

// witnesses lists, sorted, the ids heard lately that are witnesses.
func (n *Node) witnesses() []string {
	var out []string
	for _, id := range n.q.heardIDs {
		if p := n.peers[id]; id == n.cfg.NodeID && n.cfg.Witness || p != nil && p.witness {
			out = append(out, id)
		}
	}
	return out
}

// differingPromises lists the peers heard lately whose latest grant
// promised what our config never would (zero, not said, is not counted).
func (n *Node) differingPromises() []PeerPromise {
	var out []PeerPromise
	for id, p := range n.peers {
		if p.promise != 0 && !n.q.mayPromise(p.promise, n.t.Interval) && !p.gone && n.peerRecent(n.now, p) {
			out = append(out, PeerPromise{ID: id, Promise: p.promise})
		}
	}
	slices.SortFunc(out, func(a, b PeerPromise) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// countMembers updates the number of distinct node ids heard within
// ForgetPeerAfter (peers that resigned excluded). Called on every Tick and
// accepted Step in quorum mode.
func (n *Node) countMembers(now time.Time) {
	if !n.q.on() {
		return
	}
	ids := n.q.heardIDs[:0]
	ids = append(ids, n.cfg.NodeID)
	for id, p := range n.peers {
		if !p.gone && n.peerRecent(now, p) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	was, before := n.q.overfull(), n.q.heard
	n.q.heardIDs, n.q.heard = ids, len(ids)
	if n.q.overfull() && (!was || n.q.heard > before || !now.Before(n.q.announceAt)) {
		// Make ourselves heard by everyone — now, whenever a new id shows
		// up (it may not know us yet) and every third of ForgetPeerAfter
		// while it lasts — so each node counts us.
		n.emit("", Message{Type: Query})
		n.q.announceAt = now.Add(n.t.ForgetPeerAfter / 3)
	}
}

// nextAnnounce is when countMembers must run again to re-announce an
// overfull node; zero if it needs not.
func (n *Node) nextAnnounce() time.Time {
	if !n.q.overfull() {
		return time.Time{}
	}
	return n.q.announceAt
}

// noteMember recounts the node ids heard when from is not among them.
func (n *Node) noteMember(now time.Time, from string) {
	if !n.q.on() {
		return
	}
	if _, found := slices.BinarySearch(n.q.heardIDs, from); !found {
		n.countMembers(now)
	}
}
