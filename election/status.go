package election

import "time"

// LeaderInfo identifies the node that leads. The zero value means no leader
// is known.
type LeaderInfo struct {
	// ID is the leader's node id; empty when no leader is known.
	ID string `json:"id"`
	// Addr is the leader's network address when the mode knows one
	// (udp mode), empty otherwise.
	Addr string `json:"addr,omitempty"`
	// Term is the term under which ID leads.
	Term uint64 `json:"term"`
}

// Known reports whether a leader is known.
func (l LeaderInfo) Known() bool { return l.ID != "" }

// Status is a snapshot of one node's view of the election.
type Status struct {
	// Node is this node's id.
	Node string `json:"node"`
	// Role is this node's role.
	Role Role `json:"role"`
	// Leader is the leader this node knows of (itself when Role is Leader).
	Leader LeaderInfo `json:"leader"`
	// Term is the highest term this node has seen. Terms only grow; a
	// leader's term is its fencing token.
	Term uint64 `json:"term"`
	// Since is the wall-clock time Role last changed, for display only.
	Since time.Time `json:"since"`
}

// IsLeader reports whether this node leads.
func (s Status) IsLeader() bool { return s.Role == Leader }
