package httpapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lanleader/lanleader/election"
)

// maxChanges is how many leadership changes a ChangeLog keeps.
const maxChanges = 20

// Change is one leadership change as this node saw it.
type Change struct {
	// At is when this node learned of it (its wall clock).
	At time.Time `json:"at"`
	// Leader is the new leader; empty when no leader is known any more.
	Leader string `json:"leader"`
	// Term is the new leader's term.
	Term uint64 `json:"term"`
	// Reason says what happened, from what this node observed.
	Reason string `json:"reason"`
}

// ChangeLog records the recent leadership changes for the status page.
// Give its Callbacks to the Elector (with election.Combine).
type ChangeLog struct {
	node string
	now  func() time.Time

	mu   sync.Mutex
	prev election.LeaderInfo
	// last is the last leader known, kept across a spell of no leader.
	last    election.LeaderInfo
	changes []Change // newest first
}

// NewChangeLog returns an empty log for this node's id.
func NewChangeLog(node string) *ChangeLog {
	return &ChangeLog{node: node, now: time.Now}
}

// Callbacks records every leader change and the end of this node's
// leadership.
func (c *ChangeLog) Callbacks() election.Callbacks {
	return election.Callbacks{
		OnNewLeader: c.newLeader,
		OnStoppedLeading: func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.add(Change{Term: c.prev.Term, Reason: "this node stopped leading: leadership lost or lanleader stopping; its jobs stop per on_leader_loss"})
		},
		OnStartedLeading: func(context.Context, uint64) {},
	}
}

func (c *ChangeLog) newLeader(l election.LeaderInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, last := c.prev, c.last
	c.prev = l
	if l.Known() {
		c.last = l
	}
	who := func(id string) string {
		if id == c.node {
			return "this node (" + id + ")"
		}
		return id
	}
	var reason string
	switch {
	case !l.Known() && prev.Known():
		reason = fmt.Sprintf("%s is no longer heard leading (term %d); no leader known, an election follows", who(prev.ID), prev.Term)
	case !l.Known():
		reason = "no leader known"
	case !prev.Known() && last.Known() && last.ID != l.ID:
		reason = fmt.Sprintf("%s took over from %s after an election (term %d → %d)", who(l.ID), who(last.ID), last.Term, l.Term)
	case !prev.Known() && last.Known():
		reason = fmt.Sprintf("%s leads again after an election, term %d (was %d)", who(l.ID), l.Term, last.Term)
	case !prev.Known():
		reason = fmt.Sprintf("%s leads term %d (the first leader this node knows of)", who(l.ID), l.Term)
	case prev.ID == l.ID:
		reason = fmt.Sprintf("%s leads again, under a new term %d (was %d)", who(l.ID), l.Term, prev.Term)
	default:
		reason = fmt.Sprintf("%s took over from %s (term %d → %d)", who(l.ID), who(prev.ID), prev.Term, l.Term)
	}
	c.add(Change{Leader: l.ID, Term: l.Term, Reason: reason})
}

// add prepends ch. Must hold c.mu.
func (c *ChangeLog) add(ch Change) {
	ch.At = c.now()
	c.changes = append([]Change{ch}, c.changes...)
	if len(c.changes) > maxChanges {
		c.changes = c.changes[:maxChanges]
	}
}

// Changes returns the recorded changes, newest first.
func (c *ChangeLog) Changes() []Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Change(nil), c.changes...)
}
