package jobs

import "context"

// StartGate records a run's ledger entry in the cluster before the run's
// process starts. The Runner calls Commit for every run (not for retries of
// the same instant) after the entry is in its own ledger (and
// OnLedgerChange has been called) and before the first attempt. A nil
// error means the entry is recorded as well as the cluster can record it,
// and the run starts; an error means the run does not start (it is logged,
// counted as Refused, and recorded with outcome cancelled).
//
// Implementations: the UDP elector (quorum mode: a majority acknowledged a
// heartbeat carrying the entry, so any later leader elected by a majority
// knows the run started; without quorum: the heartbeat carrying it has been
// sent); a store-backed elector writes the entry in a transaction guarded
// by its leadership.
type StartGate interface {
	// Commit records e (job's entry, Outcome running, under e.Term) durably
	// in the cluster, or says it cannot. ctx is the leadership's context:
	// it ends when leadership ends. Commit must return promptly after ctx
	// ends.
	Commit(ctx context.Context, job string, e LedgerEntry) error
}

// StartGateFunc adapts a function to StartGate.
type StartGateFunc func(ctx context.Context, job string, e LedgerEntry) error

// Commit calls f.
func (f StartGateFunc) Commit(ctx context.Context, job string, e LedgerEntry) error {
	return f(ctx, job, e)
}

// mayAct is the guard, RunnerConfig.CanRun: whether this node may act as
// leader now. A run asks it as its instant fires (or its request comes),
// and again right before each attempt execs, after the gate: a leader that
// stalled in between must not start anything on a lease that ended. Call
// it without r.mu: the elector takes its own lock.
func (r *Runner) mayAct() bool { return r.cfg.CanRun == nil || r.cfg.CanRun() }

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
