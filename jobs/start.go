package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// loopDef is what a scheduling loop knows of its job, fixed at its start:
// a reload that changes the job stops the loop and starts another
// (Update).
type loopDef struct {
	spec  Spec
	sched Schedule
	gen   int
	// gatherUntil, if not zero, is the end of the gathering window: the
	// takeover decision waits for it (decide).
	gatherUntil time.Time
}

// loop schedules one job for one leadership until ctx ends. It works from
// the job's position (position.go): it waits for the start it owes or the
// schedule's next instant, sched.Next of the last one accounted for (never
// from when a timer happened to fire), and step decides each once.
func (r *Runner) loop(ctx context.Context, term uint64, j *job, def loopDef) {
	defer r.wg.Done()
	defer r.loopEnded(term, j, def)
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("jobs: scheduling loop panicked; job stops until next leadership",
				"job", def.spec.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	var gather <-chan time.Time
	if !def.gatherUntil.IsZero() {
		g := time.NewTimer(time.Until(def.gatherUntil))
		defer g.Stop()
		gather = g.C
	}
	for {
		wake, ok := r.nextWake(j, def, gather != nil)
		if !ok {
			return
		}
		var due, lapsed <-chan time.Time
		var t, lt *time.Timer
		if !wake.IsZero() {
			t = time.NewTimer(time.Until(wake))
			due = t.C
		}
		if until := r.holdUntil(j); !until.IsZero() && gather == nil {
			// A run held elsewhere: look again when the hold may lapse.
			lt = time.NewTimer(time.Until(until))
			lapsed = lt.C
		}
		gathered, woken := false, false
		select {
		case <-ctx.Done():
		case <-gather:
			gathered = true
		case <-due:
		case <-lapsed:
			woken = true
		case <-j.holdWake:
			woken = true
		}
		if t != nil {
			t.Stop()
		}
		if lt != nil {
			lt.Stop()
		}
		switch {
		case ctx.Err() != nil:
			return
		case gathered:
			gather = nil
			r.decide(ctx, term, j, def)
		case woken:
			if gather == nil { // while gathering, the takeover decides
				r.lapse(ctx, term, j, def.spec, def.sched) // if it has lapsed; else wait again
			}
		default:
			r.step(ctx, term, j, def)
		}
	}
}

// nextWake returns when the loop of def should next step: at once for a
// due start, guardRetry from now for one the guard refused, else at the
// schedule's next instant. ok is false when the loop is done: replaced by
// a reload, or the schedule has no further instants (and no takeover is
// pending).
func (r *Runner) nextWake(j *job, def loopDef, gathering bool) (wake time.Time, ok bool) {
	r.mu.Lock()
	defer r.unlock()
	if j.gen != def.gen {
		return time.Time{}, false
	}
	return r.nextWakeLocked(j, def, time.Now(), gathering)
}

// nextWakeLocked is nextWake's rule, at now.
func (c *core) nextWakeLocked(j *job, def loopDef, now time.Time, gathering bool) (wake time.Time, ok bool) {
	d := j.pos.due
	switch {
	case d.refused:
		j.next, wake = d.instant, now.Add(guardRetry)
	case !d.instant.IsZero():
		j.next, wake = d.instant, d.instant
	default:
		j.next = def.sched.Next(j.pos.cursor)
		wake = j.next
	}
	if wake.IsZero() && !gathering {
		c.logs.Warn("jobs: schedule has no further instants", "job", def.spec.Name)
		return time.Time{}, false
	}
	return wake, true
}

// loopEnded clears what the loop of def showed, unless a reload replaced
// it; a start still due is then left to the next leadership
// (handOverDueLocked).
func (r *Runner) loopEnded(term uint64, j *job, def loopDef) {
	r.mu.Lock()
	defer r.unlock()
	if j.gen != def.gen {
		return
	}
	j.next = time.Time{}
	if j.pos.term == term {
		r.handOverDueLocked(j)
	}
}

// decide makes the takeover decision for j at the end of the gathering
// window; the loop then makes the start it decided, if any.
func (r *Runner) decide(ctx context.Context, term uint64, j *job, def loopDef) {
	r.mu.Lock()
	defer r.unlock()
	if r.closed || ctx.Err() != nil || j.gen != def.gen {
		return
	}
	r.decideLocked(j, term, time.Now())
}

// decideLocked makes j's takeover decision at now, the end of the
// gathering window.
func (c *core) decideLocked(j *job, term uint64, now time.Time) {
	c.applyLocked(j, c.takeOver(j, j.pos.takeover, now, term))
	c.ledgerChanged()
}

// verdict is what step decided about a start, for the log: written after
// the lock is released.
type verdict struct {
	level slog.Level
	msg   string
	attrs []any
}

// step decides, once, the start j owes now: its due start, else the
// schedule's next instant if it is due. The start is made, or skipped with
// a logged reason and counted, or, if the guard says this node cannot act
// as leader right now, kept due and asked about again (nextWake) until it
// can, a later instant overtakes it or misfire_grace passes. A loop that a
// reload replaced or whose leadership ended decides nothing: the new loop,
// or the next leadership, takes the start up.
func (r *Runner) step(ctx context.Context, term uint64, j *job, def loopDef) {
	canAct := r.mayAct() // before r.mu: the elector takes its own lock
	now := time.Now()
	r.mu.Lock()
	if r.closed || ctx.Err() != nil || j.gen != def.gen {
		r.unlock()
		return
	}
	rec, _, start := r.stepLocked(j, def, term, now, canAct)
	var runCtx context.Context
	if start {
		runCtx = r.runningLocked(ctx, j, &rec)
	}
	r.unlock()
	if start {
		go r.run(runCtx, j, def.spec, rec)
	}
}

// stepLocked is step's rule at now, canAct the guard's answer: the start
// j owes, decided (judgeLocked) and, if made, recorded running (the
// driver then runs rec; rerun marks the second run of an interrupted
// instant). The verdicts are logged.
func (c *core) stepLocked(j *job, def loopDef, term uint64, now time.Time, canAct bool) (rec RunRecord, rerun, start bool) {
	d := j.pos.due
	if d.instant.IsZero() {
		next := def.sched.Next(j.pos.cursor)
		if next.IsZero() || next.After(now) {
			return RunRecord{}, false, false
		}
		d.instant = next
	}
	vs, start := c.judgeLocked(j, def, d, now, canAct)
	if start {
		rerun = j.pos.due.rerun
		rec = c.startLocked(j, def.spec, j.pos.due.instant, term)
		j.accountLocked(rec.ScheduledAt)
	}
	log := c.logs.With("job", def.spec.Name, "term", term)
	for _, v := range vs {
		log.Log(context.Background(), v.level, v.msg, v.attrs...)
	}
	return rec, rerun, start
}

// judgeLocked is step's rule for the due start d at now: the verdicts to
// log, and whether to start it (it is then j.pos.due). Must hold r.mu.
func (c *core) judgeLocked(j *job, def loopDef, d dueStart, now time.Time, canAct bool) (vs []verdict, start bool) {
	spec, sched := def.spec, def.sched
	skip := func(instant time.Time, counter *uint64, msg string, attrs ...any) {
		*counter++
		if d.refused {
			c.unstartLocked(j, instant, j.pos.term) // recorded, never started (refused.go)
		}
		j.accountLocked(instant)
		vs = append(vs, verdict{slog.LevelWarn, msg, append([]any{"scheduled_at", instant}, attrs...)})
	}
	// A later instant is due too (woken late, or the guard refused until
	// then): it overtakes this start, except a rerun not refused yet, which
	// goes first.
	if !d.rerun || d.refused {
		base := maxTime(d.instant, j.pos.cursor)
		if latest, n := latestDue(sched, base, now); n > 0 {
			vs = append(vs, c.overtakeLocked(j, sched, d, base, latest, n)...)
			d = j.pos.due
		}
	}
	if late, over := tooLate(&spec, sched, d.instant, now); over && (!d.rerun || d.refused) {
		attrs := append([]any{"late", late}, graceAttrs(&spec, sched, d.instant)...)
		if d.refused {
			skip(d.instant, &j.skipped.Refused, "jobs: not started: this node could not act as leader within misfire_grace", attrs...)
		} else {
			skip(d.instant, &j.skipped.Misfired, "jobs: instant too late to run (misfire_grace)", attrs...)
		}
		return vs, false
	}
	if !canAct {
		if !d.refused {
			vs = append(vs, verdict{slog.LevelWarn,
				"jobs: not starting yet: this node cannot currently act as leader; trying again until it can",
				append([]any{"scheduled_at", d.instant, "rerun", d.rerun}, graceAttrs(&spec, sched, d.instant)...)})
		}
		d.refused = true
		j.pos.due = d
		if !d.rerun && d.instant.After(j.pos.cursor) {
			j.pos.cursor = d.instant
		}
		return vs, false
	}
	switch h, held := c.heldLocked(j, now); {
	case c.draining:
		skip(d.instant, &j.skipped.Refused, "jobs: not starting: lanleader is stopping")
	case j.active > 0 && spec.Overlap == OverlapSkip:
		skip(d.instant, &j.skipped.Overlap, "jobs: not starting: previous run still going (overlap: skip)")
	case held && (spec.Overlap == OverlapSkip || d.rerun && sameInstant(j, h.entry, d.instant)):
		// A rerun is held back too: by another run of the job under
		// overlap: skip, and by another run of its very instant (one under
		// an older term that a takeover found held) under any policy.
		attrs := []any{"node", h.from, "running_scheduled_at", h.entry.Instant, "running_term", h.entry.Term}
		switch {
		case spec.Overlap != OverlapSkip:
			skip(d.instant, &j.skipped.Overlap, "jobs: not running it again: this instant is still going on another node", attrs...)
		case h.presumed:
			skip(d.instant, &j.skipped.Overlap, "jobs: not starting: previous leader's run may still be going on its node (overlap: skip)",
				append(attrs, "until", h.until)...)
		default:
			skip(d.instant, &j.skipped.Overlap, "jobs: not starting: previous run still going on another node (overlap: skip)", attrs...)
		}
	default:
		e, ok := c.newestEntry(j)
		if ok && d.rerun && sameInstant(j, e, d.instant) && e.Outcome.reported() {
			// The run concluded interrupted ended after all, and its own
			// outcome has been heard since (a node that was only cut off).
			skip(d.instant, &j.skipped.AlreadyStarted, "jobs: not running it again: its run ended after all (outcome heard)",
				"ledger_outcome", e.Outcome, "ledger_term", e.Term)
			break
		}
		if ok && !c.owedLocked(j, d, e) &&
			(d.rerun && e.lastStarted().After(d.instant) || !d.rerun && !d.instant.After(e.lastStarted())) {
			// A ledger heard since the takeover (a deposed leader's, during
			// the gathering window) names this instant or a later one; or a
			// run of a later instant has started, which supersedes a rerun.
			skip(d.instant, &j.skipped.AlreadyStarted, "jobs: not starting: this or a later instant already started",
				"ledger_instant", e.Instant, "ledger_term", e.Term)
			break
		}
		j.pos.due = d
		return vs, true
	}
	return vs, false
}

// overtakeLocked makes latest, the last of the n instants of sched due
// after base, j's due start in place of d: d and the instants between are
// skipped (d counted refused if the guard refused it, the others
// misfired). It returns what to log. Must hold r.mu.
func (c *core) overtakeLocked(j *job, sched Schedule, d dueStart, base, latest time.Time, n int) []verdict {
	var vs []verdict
	from, between := d.instant, n // d and the instants up to latest
	if d.refused || d.rerun {
		msg := "jobs: not started: this node could not act as leader before a later instant came due"
		if d.refused {
			j.skipped.Refused++
			c.unstartLocked(j, d.instant, j.pos.term)
		} else {
			msg = "jobs: rerun not started: a later instant came due first"
		}
		vs = append(vs, verdict{slog.LevelWarn, msg, []any{"scheduled_at", d.instant, "rerun", d.rerun, "later", latest}})
		from, between = sched.Next(base), n-1
	}
	if between > 0 {
		j.skipped.Misfired += uint64(between)
		vs = append(vs, verdict{slog.LevelWarn, "jobs: instants overtaken by a later one; skipped",
			[]any{"from", from, "count", between}})
	}
	j.pos.due = dueStart{instant: latest}
	return vs
}

// handOverDueLocked leaves the start j still owes, if any, to the next
// leadership (this node's or another's), which decides it from the
// ledger: said in the log, and counted refused if the guard refused it.
// Must hold r.mu.
func (c *core) handOverDueLocked(j *job) {
	d := j.pos.due
	if d.instant.IsZero() {
		return
	}
	j.pos.due = dueStart{}
	if d.refused {
		j.skipped.Refused++
		c.unstartLocked(j, d.instant, j.pos.term)
	}
	c.logs.Info("jobs: leadership ended before this instant could start; the next leader decides it",
		"job", j.spec.Name, "scheduled_at", d.instant, "rerun", d.rerun, "refused", d.refused, "term", j.pos.term)
}

// startLocked records the run of instant (j.pos.due) running: its ledger
// entry first (the ledger changed: Cluster.Publish announces it), and
// returns its record for the driver to run.
func (c *core) startLocked(j *job, spec Spec, instant time.Time, term uint64) RunRecord {
	instant = instant.UTC() // one spelling of the key in ledger, logs and LANLEADER_SCHEDULED_AT
	c.runStartedLocked(j)
	delete(c.unknown, j.id) // our own entry is now the latest word
	c.own[j.id] = c.runningEntry(j.id, instant, term, &spec)
	j.schedRuns = append(j.schedRuns, c.own[j.id])
	c.ledgerChanged()
	return RunRecord{Job: spec.Name, ScheduledAt: instant, Term: term}
}

// runningLocked gives rec, a run the core started, its id and returns the
// context to run it under, counted in r's wait groups; the caller starts
// its goroutine once r.mu is released. Must hold r.mu.
func (r *Runner) runningLocked(ctx context.Context, j *job, rec *RunRecord) context.Context {
	rec.RunID = newRunID()
	r.wg.Add(1)
	r.runs.Add(1)
	runCtx := j.runCtx // the job's, not the loop's: a reload's loop restart must not stop runs
	if runCtx == nil {
		runCtx = ctx // started outside a leadership (tests)
	}
	return runCtx
}

// sameInstant reports whether e is an entry of j's scheduled run of
// instant.
func sameInstant(j *job, e LedgerEntry, instant time.Time) bool {
	return e.JobID == j.id && e.Instant.Equal(instant)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
