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
		out = append(out, PeerInfo{ID: id, Priority: p.priority, LastHeard: p.lastHeard, Resigned: p.gone})
	}
	slices.SortFunc(out, func(a, b PeerInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}
