package protocol

import (
	"slices"
	"strings"
	"time"
)

// PeerInfo is one other node this node has accepted messages from, for
// the status page.
type PeerInfo struct {
	// ID is the node id.
	ID string
	// Priority is the priority it last sent.
	Priority uint8
	// LastHeard is when its last accepted message arrived (the caller's
	// time base).
	LastHeard time.Time
	// Resigned is set when its last message was a RESIGN.
	Resigned bool
	// Witness: its last message said it is a witness (FlagWitness).
	Witness bool
}

// Peers returns the nodes heard within ForgetPeerAfter before now, sorted
// by id. Followers send little (start-up queries, claims, presence reports
// to the leader), so a follower lists mostly the leader; the leader lists
// everyone.
func (n *Node) Peers(now time.Time) []PeerInfo {
	out := make([]PeerInfo, 0, len(n.peers))
	for id, p := range n.peers {
		if !n.peerRecent(now, p) {
			continue
		}
		out = append(out, PeerInfo{ID: id, Priority: p.priority, LastHeard: p.lastHeard, Resigned: p.gone, Witness: p.witness})
	}
	slices.SortFunc(out, func(a, b PeerInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// WitnessHeard returns the first (by id) witness heard within
// ForgetPeerAfter before now, or "". A node without quorum says it hears
// one: a witness votes only in quorum mode.
func (n *Node) WitnessHeard(now time.Time) string {
	first := ""
	for id, p := range n.peers {
		if p.witness && !p.gone && n.peerRecent(now, p) && (first == "" || id < first) {
			first = id
		}
	}
	return first
}
