package jobs

import "context"

// mayAct is the guard, Cluster.MayAct: whether this node may act as
// leader now. A run asks it as its instant fires (or its request comes),
// and again right before each attempt execs, after the gate: a leader that
// stalled in between must not start anything on a lease that ended. Call
// it without r.mu: the elector takes its own lock.
func (r *Runner) mayAct() bool { return r.cluster.MayAct() }

// mayStart is the check right before an attempt of a run decided in the
// leadership whose context is leaderCtx (the job's run context) execs: ""
// if it may, else why not. That leadership must still be under way, not
// only some leadership of this node: between an end and a new start
// another leader may have run the instant. A reload that removed the job
// ends the context too.
func (r *Runner) mayStart(leaderCtx context.Context) string {
	switch {
	case leaderCtx.Err() != nil:
		return "the leadership it was decided in ended (or the job was removed)"
	case !r.mayAct():
		return "this node cannot currently act as leader"
	}
	return ""
}
