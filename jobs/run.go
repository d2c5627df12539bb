package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"time"

	"github.com/lanleader/lanleader/internal/proc"
)

// RunRecord describes one run of a job: one scheduled instant, possibly
// several attempts.
type RunRecord struct {
	// Job is the job's name.
	Job string `json:"job"`
	// RunID is unique per run (LANLEADER_RUN_ID).
	RunID string `json:"run_id"`
	// ScheduledAt is the scheduled instant, in UTC: the run's key, the same
	// in the ledger, the logs and LANLEADER_SCHEDULED_AT (RFC 3339, "Z").
	ScheduledAt time.Time `json:"scheduled_at"`
	// Term is the leadership term the run started under (LANLEADER_TERM).
	Term uint64 `json:"term"`
	// Attempt is the number of attempts made (1 + retries used).
	Attempt int `json:"attempt"`
	// Outcome is ok, failed or cancelled.
	Outcome Outcome `json:"outcome"`
	// ExitCode of the last attempt: its process's exit status, or for an
	// http: job its response's status code; -1 if it was killed by a
	// signal, could not start, or got no response.
	ExitCode int `json:"exit_code"`
	// Started is when the first attempt started.
	Started time.Time `json:"started"`
	// Duration is from the first attempt's start to the last one's end.
	// JSON carries it as duration_seconds.
	Duration time.Duration `json:"-"`
	// Error describes a failure (start error, timeout, signal), if any.
	Error string `json:"error,omitempty"`
	// Output holds the last lines (at most OutputTailLines) the last
	// attempt printed, stdout and stderr interleaved (an http: job's
	// response body): what a failure notification shows.
	Output []string `json:"output_tail,omitempty"`
	// Node is the node that ran it.
	Node string `json:"node"`
	// Manual is set for a run started by `lanleader trigger` (Runner.Trigger)
	// rather than by the schedule; ScheduledAt is then when it was
	// requested, and the ledger keeps it apart from the scheduled instants.
	Manual bool `json:"manual"`
	// Heard is set when this node did not run it but heard of it in a
	// leader's ledger: only Job, ScheduledAt, Term, Outcome, Node and
	// Manual are known.
	Heard bool `json:"heard,omitempty"`
}

// MarshalJSON adds duration_seconds, the form /status readers expect.
func (rec RunRecord) MarshalJSON() ([]byte, error) {
	type plain RunRecord
	return json.Marshal(struct {
		plain
		DurationSeconds float64 `json:"duration_seconds"`
	}{plain(rec), rec.Duration.Seconds()})
}

// UnmarshalJSON reads what MarshalJSON writes, duration_seconds included.
func (rec *RunRecord) UnmarshalJSON(b []byte) error {
	type plain RunRecord
	var v struct {
		plain
		DurationSeconds float64 `json:"duration_seconds"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*rec = RunRecord(v.plain)
	rec.Duration = time.Duration(v.DurationSeconds * float64(time.Second))
	return nil
}

// run executes all attempts of one run (rec names it: job, run id,
// instant, term, manual) and records the result. A panic here is contained
// to this run.
func (r *Runner) run(leaderCtx context.Context, j *job, spec Spec, rec RunRecord) {
	term := rec.Term
	rec.ScheduledAt = rec.ScheduledAt.UTC()
	rec.Node, rec.Outcome, rec.ExitCode, rec.Started = r.cfg.Node, OutcomeFailed, -1, time.Now()
	defer r.wg.Done()
	defer r.runs.Done()
	owed := false
	defer func() {
		p := recover()
		if p == nil && owed {
			return // no run: its instant is decided again
		}
		if p != nil {
			rec.Outcome, rec.Error = OutcomeFailed, fmt.Sprintf("panic: %v", p)
			r.log.Error("jobs: run panicked", "job", spec.Name, "run_id", rec.RunID,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
		rec.Duration = time.Since(rec.Started)
		r.finish(j, rec)
	}()

	// No retry after leadership ends or lanleader starts stopping (Drain).
	retryCtx, stopRetries := context.WithCancel(leaderCtx)
	defer stopRetries()
	defer context.AfterFunc(r.drainCtx, stopRetries)()
	// on_leader_loss: finish detaches the run from leadership and from
	// Drain; the Runner's own stop (Drain or Wait giving up) still ends it.
	// cancel ends it with leadership or Drain, whichever comes first.
	runCtx := retryCtx
	if spec.OnLeaderLoss == LeaderLossFinish {
		runCtx = r.stopCtx
	}
	log := r.log.With("job", spec.Name, "run_id", rec.RunID)
	e := r.runningEntry(j.id, rec.ScheduledAt, term, &spec)
	if err := r.cluster.Commit(leaderCtx, spec.Name, e); err != nil {
		r.count(j, func(c *Counters) { c.Refused++ })
		rec.Outcome, rec.Error = OutcomeCancelled, "not started: could not record the run in the cluster: "+err.Error()
		log.Warn("jobs: not starting: could not record the run in the cluster first", "scheduled_at", rec.ScheduledAt, "term", term, "err", err)
		return
	}
	for attempt := 1; attempt <= spec.Retries+1; attempt++ {
		if attempt > 1 && !sleepCtx(retryCtx, spec.RetryDelay) {
			log.Info("jobs: no retry: leadership ended or lanleader is stopping", "attempt", attempt-1)
			return
		}
		// The guard again, right before the exec: the gate's round trip
		// and a retry's delay are where a stalled leader wakes up past
		// its lease, with the gate's yes in hand. It must still be the
		// leadership the run was decided in: one that ended meanwhile may
		// have let another leader run the instant, even if this node
		// leads again now.
		// logged: the attempt's "run started" is in the log already (a
		// request refused as it was about to go out), so a manual run's
		// refusal is its end, not a start that did not happen.
		refuse := func(why string, logged bool) {
			if attempt > 1 {
				log.Warn("jobs: no retry: "+why, "attempt", attempt-1)
				return
			}
			if !rec.Manual {
				owed = true // no attempt started: the instant is decided again (refused.go)
				r.oweRefused(j, rec.ScheduledAt, term, leaderCtx.Err() == nil, why)
				return
			}
			r.count(j, func(c *Counters) { c.Refused++ })
			if logged {
				rec.Outcome, rec.Error = OutcomeCancelled, "cancelled before it acted: "+why
				log.Warn("jobs: run cancelled before it acted: "+why, "scheduled_at", rec.ScheduledAt, "term", term)
				return
			}
			rec.Outcome, rec.Error = OutcomeCancelled, "not started: "+why
			log.Warn("jobs: not starting: "+why, "scheduled_at", rec.ScheduledAt, "term", term)
		}
		// The clock is read first: the attempt's licence counts from
		// before the guard said yes.
		boot := r.bootNow()
		if why := r.mayStart(leaderCtx); why != "" {
			refuse(why, false)
			return
		}
		if attempt > 1 {
			log.Warn("jobs: attempt failed; retrying", "attempt", attempt-1, "of", spec.Retries+1,
				"exit_code", rec.ExitCode, "error", rec.Error, "retry_delay", spec.RetryDelay, "output_tail", rec.Output)
		}
		last := rec
		rec.Attempt = attempt
		res := r.attempt(runCtx, leaderCtx, term, &spec, &rec, runLicence(&spec, boot))
		if res.Refused != "" {
			// Asked again as it was about to act (a request, once its
			// connection was made): nothing of this attempt was done,
			// though its start was logged.
			rec.Attempt, rec.Output = last.Attempt, last.Output
			refuse(res.Refused, true)
			return
		}
		rec.ExitCode = res.Code
		rec.Error = ""
		switch {
		case res.OK:
			rec.Outcome = OutcomeOK
			return
		case res.Stopped && runCtx.Err() != nil:
			rec.Outcome, rec.Error = OutcomeCancelled, "cancelled: "+res.What
			return
		case res.Expired && spec.OnLeaderLoss == LeaderLossCancel:
			// Not the run's doing: this node could not say it may act for
			// the licence's length (stalled, paused, deposed unheard).
			rec.Outcome, rec.Error = OutcomeCancelled, "cancelled by its shim: this node could not act as leader for the licence's length: "+res.What
			return
		case res.Stopped || res.Expired: // a finish run's licence is its timeout
			rec.Error = "timeout after " + spec.Timeout.String() + ": " + res.What
		default:
			rec.Error = res.What
		}
		rec.Outcome = OutcomeFailed
	}
}

// attempt makes one attempt of the run: the job's process, or its request
// (executorFor), within the job's timeout and under lic (runLicence; nil:
// none), renewed while this node may act for a cancel job; its output
// logged and its tail kept in rec. leaderCtx is the leadership the run was
// decided in, for the start check an executor asks right before it acts.
func (r *Runner) attempt(ctx, leaderCtx context.Context, term uint64, spec *Spec, rec *RunRecord, lic *proc.Licence) attemptResult {
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
		defer cancel()
	}
	if lic != nil && spec.OnLeaderLoss == LeaderLossCancel {
		renewCtx, stopRenewing := context.WithCancel(ctx)
		renewed := make(chan struct{})
		go func() {
			defer close(renewed)
			r.renewLicence(renewCtx, lic)
		}()
		defer func() { stopRenewing(); <-renewed }()
	}
	grace := r.killGrace(spec)
	logger := r.log.With("job", spec.Name, "run_id", rec.RunID, "attempt", rec.Attempt)
	logger.Info("jobs: run started", "scheduled_at", rec.ScheduledAt, "term", term)
	var tail outputTail
	defer func() { rec.Output = tail.lines() }()
	call := &attemptCall{
		spec:      spec,
		rec:       rec,
		identity:  r.runIdentity(spec, rec),
		killGrace: grace,
		mayStart:  func() string { return r.mayStart(leaderCtx) },
		licence:   lic,
		output: func(stream, line string, partial bool) {
			tail.add(line)
			if partial {
				logger.Info("jobs: output", "stream", stream, "line", line, "partial", true)
				return
			}
			logger.Info("jobs: output", "stream", stream, "line", line)
		},
	}
	if spec.HTTP == nil {
		call.env = r.runEnv(spec, call.identity)
	}
	res := r.executorFor(spec).execute(ctx, call)
	logger.Info("jobs: attempt ended", "result", res.What, "duration", res.Duration,
		"stopped", res.Stopped)
	return res
}

// runEnv is a run's environment: processEnv with the run's identity.
func (r *Runner) runEnv(spec *Spec, identity []identityVar) []string {
	return processEnv(r.environ(), spec.Env, identity)
}

// processEnv is the base environment, then env (sorted, so runs are
// reproducible), then identity as LANLEADER_* variables, which win.
func processEnv(base []string, extra map[string]string, identity []identityVar) []string {
	env := make([]string, 0, len(base)+len(extra)+len(identity))
	env = append(env, base...)
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	for _, v := range identity {
		env = append(env, v.envName()+"="+v.Value)
	}
	return env
}

// finish records the end of a run: ledger (if its entry still names this
// run), last run, counters, callback.
func (r *Runner) finish(j *job, rec RunRecord) {
	attrs := []any{"job", rec.Job, "run_id", rec.RunID, "outcome", rec.Outcome.String(),
		"exit_code", rec.ExitCode, "attempts", rec.Attempt, "duration", rec.Duration,
		"scheduled_at", rec.ScheduledAt, "term", rec.Term}
	if rec.Error != "" {
		attrs = append(attrs, "error", rec.Error)
	}
	if rec.Outcome == OutcomeFailed {
		// The final failure, every retry used: loud, with what it printed last.
		r.log.Error("jobs: run failed", append(attrs, "output_tail", rec.Output)...)
	} else {
		r.log.Info("jobs: run finished", attrs...)
	}
	r.mu.Lock()
	r.finishLocked(j, rec)
	r.unlock()
	if r.cfg.OnRunFinished != nil {
		func() {
			defer func() {
				if p := recover(); p != nil {
					r.log.Error("jobs: OnRunFinished panicked", "job", rec.Job, "panic", fmt.Sprint(p))
				}
			}()
			r.cfg.OnRunFinished(rec)
		}()
	}
}

// finishLocked records the end of rec, a run of j: its ledger entry (if
// it still names this run), last run, history.
func (c *core) finishLocked(j *job, rec RunRecord) {
	j.active--
	if j.active == 0 && c.gone[j.spec.Name] == j {
		delete(c.gone, j.spec.Name) // its last run: nothing to take back
	}
	j.last = &rec
	delete(c.manualRuns, rec.RunID)
	if !rec.Manual {
		c.dropSchedRunLocked(j, rec.ScheduledAt, rec.Term)
	}
	id := j.id
	if rec.Manual {
		id = ManualJobIDOf(j.spec.Name)
	}
	// The ledger names one run per id, the newest: with overlap: allow an
	// older run (or a run of the same instant under an older term) ends
	// while a newer one goes on, and must not overwrite its entry.
	if e, ok := c.own[id]; ok && oneRun(e, LedgerEntry{Instant: rec.ScheduledAt, Term: rec.Term}) {
		c.own[id] = e.ended(rec.Outcome)
		c.ledgerChanged()
	}
	c.runEndedLocked() // after the ledger shows the outcome: a release carries it
	c.history.Add(rec)
}

// dropSchedRunLocked forgets j's scheduled run of instant under term as
// one this process runs. Must hold r.mu.
func (c *core) dropSchedRunLocked(j *job, instant time.Time, term uint64) {
	if i := slices.IndexFunc(j.schedRuns, func(e LedgerEntry) bool {
		return e.Term == term && e.Instant.Equal(instant)
	}); i >= 0 {
		j.schedRuns = slices.Delete(j.schedRuns, i, i+1)
	}
}

// trigger is LANLEADER_TRIGGER: what started the run.
func (rec RunRecord) trigger() string {
	if rec.Manual {
		return "manual"
	}
	return "schedule"
}

func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
