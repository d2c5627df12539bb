package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Errors of Trigger, for the caller to tell the requester.
var (
	// ErrUnknownJob: no job has that name.
	ErrUnknownJob = errors.New("no such job")
	// ErrNotLeading: this node does not lead (or cannot act as leader).
	ErrNotLeading = errors.New("this node does not lead")
	// ErrOverlap: a run of the job is still going and its overlap policy
	// is skip.
	ErrOverlap = errors.New("a run of the job is still going (overlap: skip)")
)

// Trigger starts one manual run of the named job at once, under the current
// leadership, and returns its record (run id, requested instant, term). The
// run is kept apart from the schedule: its ledger entry has the job's
// manual id (ManualJobIDOf), so it neither counts as a scheduled instant nor
// moves the schedule's cursor; LANLEADER_TRIGGER=manual tells the job. The
// job's overlap policy applies across manual and scheduled runs; the
// guard (Cluster.MayAct) applies as to any start.
func (r *Runner) Trigger(name string) (RunRecord, error) {
	// The guard before r.mu, as step does: the elector takes its own lock.
	if !r.mayAct() {
		return RunRecord{}, ErrNotLeading
	}
	r.mu.Lock()
	ctx, j, rec, err := r.manualLocked(name)
	r.unlock() // the ledger is published before the run starts
	if err != nil {
		return RunRecord{}, err
	}
	go r.run(ctx, j, j.spec, rec)
	return rec, nil
}

// manualLocked records the manual run Trigger starts: the context to run
// it under, its job and record, counted in r's wait groups. Must hold
// r.mu.
func (r *Runner) manualLocked(name string) (context.Context, *job, RunRecord, error) {
	var j *job
	for _, c := range r.jobs {
		if c.spec.Name == name {
			j = c
		}
	}
	if j == nil {
		return nil, nil, RunRecord{}, fmt.Errorf("%w: %q", ErrUnknownJob, name)
	}
	ctx, term := j.runCtx, r.term // the job's run context: a reload that removes the job stops it
	if !r.leadingLocked() || ctx == nil || ctx.Err() != nil {
		return nil, nil, RunRecord{}, ErrNotLeading
	}
	rec, err := r.triggerLocked(j, newRunID(), term, time.Now())
	if err != nil {
		return nil, nil, RunRecord{}, err
	}
	r.wg.Add(1)
	r.runs.Add(1)
	return ctx, j, rec, nil
}

// triggerLocked is Trigger's rule at now: a manual run of j under term,
// refused under overlap: skip while a run of j goes on (here or on a
// deposed leader: holds.go), else recorded running (its own ledger id)
// for the driver to run with runID.
func (c *core) triggerLocked(j *job, runID string, term uint64, now time.Time) (RunRecord, error) {
	if _, held := c.heldLocked(j, now); (j.active > 0 || held) && j.spec.Overlap == OverlapSkip {
		return RunRecord{}, ErrOverlap
	}
	rec := RunRecord{
		Job: j.spec.Name, RunID: runID, ScheduledAt: now.UTC().Truncate(time.Second),
		Term: term, Manual: true, Node: c.node, Outcome: OutcomeRunning,
	}
	id := ManualJobIDOf(j.spec.Name)
	c.runStartedLocked(j)
	c.own[id] = c.runningEntry(id, rec.ScheduledAt, term, &j.spec)
	c.manualRuns[rec.RunID] = rec
	c.ledgerChanged()
	c.logs.Info("jobs: manual run requested", "job", j.spec.Name, "run_id", rec.RunID, "term", term)
	return rec, nil
}

// RunByID returns the run with the given id: a manual run still going
// (Outcome running) or any run still in the history.
func (r *Runner) RunByID(runID string) (RunRecord, bool) {
	r.mu.Lock()
	rec, ok := r.manualRuns[runID]
	r.unlock()
	if ok {
		return rec, true
	}
	return r.history.Find(runID)
}
