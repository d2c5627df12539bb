package jobs

import (
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
	defer r.unlock()
	var j *job
	for _, c := range r.jobs {
		if c.spec.Name == name {
			j = c
		}
	}
	if j == nil {
		return RunRecord{}, fmt.Errorf("%w: %q", ErrUnknownJob, name)
	}
	ctx, term := j.runCtx, r.term // the job's run context: a reload that removes the job stops it
	if !r.leadingLocked() || ctx == nil || ctx.Err() != nil {
		return RunRecord{}, ErrNotLeading
	}
	if _, held := r.heldLocked(j, time.Now()); (j.active > 0 || held) && j.spec.Overlap == OverlapSkip {
		return RunRecord{}, ErrOverlap // here or on a deposed leader (holds.go)
	}
	rec := RunRecord{
		Job: name, RunID: newRunID(), ScheduledAt: time.Now().UTC().Truncate(time.Second),
		Term: term, Manual: true, Node: r.cfg.Node, Outcome: OutcomeRunning,
	}
	id := ManualJobIDOf(name)
	r.runStartedLocked(j)
	r.own[id] = LedgerEntry{JobID: id, Instant: rec.ScheduledAt, Outcome: OutcomeRunning, Term: term}
	r.manualRuns[rec.RunID] = rec
	r.wg.Add(1)
	r.runs.Add(1)
	r.ledgerChanged()
	r.log.Info("jobs: manual run requested", "job", name, "run_id", rec.RunID, "term", term)
	go r.run(ctx, j, j.spec, rec)
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
