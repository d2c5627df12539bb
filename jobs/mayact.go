package jobs

// MayAct reports whether this node may start a run now: the guard
// (mayAct, Cluster.MayAct: in udp mode it leads, its quorum lease
// holds and it was not paused) lets it act, a leadership is under way here,
// and lanleader is not stopping. Those are the checks every start makes
// (step, every attempt, Trigger, the rerun of a lapsed hold), so what an
// application is told (/leader, `lanleader is-leader`, /status's may_act)
// is what the runner would do. Safe to call from any goroutine.
func (r *Runner) MayAct() bool {
	if !r.mayAct() {
		return false
	}
	r.mu.Lock()
	defer r.unlock()
	return r.leadingLocked()
}

// leadingLocked reports the Runner's own part of MayAct: a leadership is
// under way and lanleader is not stopping. Must hold r.mu.
func (r *Runner) leadingLocked() bool { return r.term != 0 && !r.closed && !r.draining }
