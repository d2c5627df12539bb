package election

import (
	"context"
	"sync"
)

// Notifier turns a sequence of Status snapshots into Callbacks calls with
// the ordering guarantees documented on Callbacks. Every Elector feeds its
// status changes to one; modes written outside this module should too.
//
// Notifier also holds the latest Status, so an Elector can implement Status()
// by calling Notifier.Status.
type Notifier struct {
	// dispatch serializes Update so callbacks never run concurrently.
	dispatch sync.Mutex
	parent   context.Context
	cb       Callbacks

	// mu guards last only, so callbacks may call Status (directly or
	// through their Elector) without deadlocking.
	mu   sync.Mutex
	last Status

	// cancel ends the current leadership's context; nil while not leading.
	cancel context.CancelFunc
	// leadTerm is the term of the current leadership, valid while cancel != nil.
	leadTerm uint64
	// stopped is set by Stop: later Updates are ignored, so a late report
	// from a stopping elector cannot start a leadership nobody will end.
	stopped bool
}

// NewNotifier returns a Notifier that reports to cb. Leadership contexts are
// derived from parent, so they also end when parent does. initial is the
// status before any transition (normally a follower that knows no leader);
// it is not reported.
func NewNotifier(parent context.Context, cb Callbacks, initial Status) *Notifier {
	return &Notifier{parent: parent, cb: cb, last: initial}
}

// Status returns the last status passed to Update (or the initial one).
func (n *Notifier) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.last
}

// Update records s as the current status and calls the callbacks for the
// transitions from the previous one. Calls are serialized: Update may be
// called from several goroutines, and callbacks never run concurrently.
//
// A change of the term this node leads under (s.Leader.Term) while leading
// is reported as the old leadership stopping and a new one starting, since
// the fencing token changed. A leader status must name this node as leader.
func (n *Notifier) Update(s Status) {
	n.dispatch.Lock()
	defer n.dispatch.Unlock()
	if n.stopped {
		return
	}
	n.mu.Lock()
	prev := n.last
	n.last = s
	n.mu.Unlock()

	// The leadership's term is the term this node leads under
	// (s.Leader.Term), not s.Term: that is the highest term seen, which a
	// leader may learn of (a rival's claim it answers) before, or without,
	// stepping down. Using it would restart leadership under a term that
	// belongs to another node.
	leading := s.Role == Leader
	term := s.Leader.Term
	if n.cancel != nil && (!leading || term != n.leadTerm) {
		n.stopLeading()
	}
	if prev.Leader.ID != s.Leader.ID || prev.Leader.Term != s.Leader.Term {
		if n.cb.OnNewLeader != nil {
			n.cb.OnNewLeader(s.Leader)
		}
	}
	if leading && n.cancel == nil {
		ctx, cancel := context.WithCancel(n.parent)
		n.cancel, n.leadTerm = cancel, term
		if n.cb.OnStartedLeading != nil {
			n.cb.OnStartedLeading(ctx, term)
		}
	}
}

// Stop ends any current leadership (cancel, then OnStoppedLeading) and
// records s, which must not be a leader status, as final. Electors call it
// when Run returns. A leader status is recorded as a follower. Updates
// after Stop are ignored.
func (n *Notifier) Stop(s Status) {
	if s.Role == Leader {
		s.Role, s.Leader = Follower, LeaderInfo{} // a stepped-down node must not name itself leader
	}
	n.Update(s)
	n.dispatch.Lock()
	n.stopped = true
	n.dispatch.Unlock()
}

// stopLeading must be called with n.dispatch held.
func (n *Notifier) stopLeading() {
	n.cancel()
	n.cancel = nil
	if n.cb.OnStoppedLeading != nil {
		n.cb.OnStoppedLeading()
	}
}
