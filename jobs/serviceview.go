package jobs

import "time"

// ServiceStatus is one service as /status, /jobs, `lanleader jobs`, the
// status page and the metrics show it on this node.
type ServiceStatus struct {
	// Name is the service's name.
	Name string `json:"name"`
	// State is what its supervisor on this node does: idle (this node
	// does not lead), waiting, running, restarting or stopping.
	State ServiceState `json:"state"`
	// Since is when State was entered.
	Since time.Time `json:"since,omitzero"`
	// PID is the process group of this node's copy (its shim's pid on
	// Linux), 0 when none runs.
	PID int `json:"pid,omitempty"`
	// Term is the leadership this node's copy runs (or waits) under, 0
	// when idle.
	Term uint64 `json:"term,omitempty"`
	// Restarts counts the copies that exited on this node while it led,
	// since lanleader started.
	Restarts uint64 `json:"restarts"`
	// LastExit says how this node's last copy ended.
	LastExit string `json:"last_exit,omitempty"`
	// Next is when a waiting or restarting copy may start.
	Next time.Time `json:"next,omitzero"`
	// Waiting says why a waiting copy waits.
	Waiting string `json:"waiting,omitempty"`
	// LastCopy is the last copy recorded in the cluster, as this node
	// knows it (the ledger); nil if none.
	LastCopy *RecordedCopy `json:"last_copy,omitempty"`
}

// RecordedCopy is a service's copy as the ledger records it.
type RecordedCopy struct {
	// Term is the leadership that started it.
	Term uint64 `json:"term"`
	// Node is the node that led Term, when known.
	Node string `json:"node,omitempty"`
	// Running is true while it may run; false once its leader recorded
	// it stopped.
	Running bool `json:"running"`
}

// Services returns every service's status, in config order. Safe to call
// from any goroutine.
func (r *Runner) Services() []ServiceStatus {
	r.mu.Lock()
	defer r.unlock()
	out := make([]ServiceStatus, 0, len(r.services))
	for _, sv := range r.services {
		s := ServiceStatus{Name: sv.spec.Name, State: sv.state, Since: sv.since, PID: sv.pid,
			Restarts: sv.restarts, LastExit: sv.lastExit}
		if sv.state != ServiceIdle {
			s.Term = sv.term
		}
		if sv.state == ServiceWaiting || sv.state == ServiceRestarting {
			s.Next = sv.next
		}
		if sv.state == ServiceWaiting {
			s.Waiting = sv.waitWhy
		}
		if e, ok := r.newestByID(sv.id); ok {
			s.LastCopy = &RecordedCopy{Term: e.Term, Node: r.leaderOfLocked(e.Term), Running: e.Outcome == OutcomeRunning}
		}
		out = append(out, s)
	}
	return out
}
