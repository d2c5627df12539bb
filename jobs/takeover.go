package jobs

import (
	"context"
	"slices"
	"time"
)

// startLeading starts one scheduling loop per job under term. It returns
// at once (callbacks must be prompt). Without a gathering window the
// takeover decisions are made here; with one, each loop makes them when the
// window ends, from every ledger heard by then (instants due after the
// takeover are scheduled meanwhile).
func (r *Runner) startLeading(ctx context.Context, term uint64) {
	now := time.Now()
	r.mu.Lock()
	defer r.unlock()
	if r.closed {
		return
	}
	r.leaderCtx = ctx
	for _, j := range r.jobs {
		j.runCtx, j.stopRuns = context.WithCancel(ctx)
	}
	r.startLeadingLocked(term, now)
	for _, j := range r.jobs {
		r.startLoopLocked(term, j)
	}
	for _, sv := range r.services {
		r.startSupervisorLocked(ctx, term, sv, now)
	}
	r.ledgerChanged()
}

// startLeadingLocked takes up every job's schedule for the leadership of
// term, begun at now: a start the last leadership still owed is handed
// over, and each job's takeover is decided now, or when the gathering
// window ends (takeUpLocked).
func (c *core) startLeadingLocked(term uint64, now time.Time) {
	c.term = term
	c.leadStart = now
	c.gatherUntil = time.Time{}
	if c.timing.Gather > 0 {
		c.gatherUntil = now.Add(c.timing.Gather)
	}
	c.rememberLeader(term, c.node)
	c.logs.Info("jobs: leading; scheduling jobs", "term", term, "jobs", len(c.jobs), "gather", c.timing.Gather)
	for _, j := range c.jobs {
		c.handOverDueLocked(j) // the last leadership's loop may not have ended yet
		j.pos = position{}
		c.takeUpLocked(j, now)
	}
}

// stopLeadingLocked ends the current leadership: no new runs.
func (c *core) stopLeadingLocked() {
	term := c.term
	c.term = 0
	c.logs.Info("jobs: stopped leading; no new runs", "term", term)
}

// startLoopLocked starts j's scheduling loop for leadership term, under
// j.runCtx, from j's position, replacing a loop already running (which
// decides nothing more: gen). Must hold r.mu.
func (r *Runner) startLoopLocked(term uint64, j *job) {
	if j.stopLoop != nil {
		j.stopLoop()
	}
	j.gen++
	def := loopDef{spec: j.spec, sched: j.sched, gen: j.gen}
	if !j.pos.decided {
		def.gatherUntil = r.gatherUntil
	}
	var loopCtx context.Context
	loopCtx, j.stopLoop = context.WithCancel(j.runCtx)
	r.wg.Add(1)
	go r.loop(loopCtx, term, j, def)
}

// takeoverPlan is what a new leadership does first for one job.
type takeoverPlan struct {
	// cursor is the last instant accounted for; the schedule continues
	// with sched.Next(cursor).
	cursor time.Time
	// runNow, if not zero, is an instant to start at once: a misfire run
	// or the rerun of an interrupted run.
	runNow time.Time
	rerun  bool
}

// knownEntry returns the newest ledger entry for j from this node's own
// ledger and the adopted ones. Must hold r.mu.
func (c *core) knownEntry(j *job) (LedgerEntry, bool) {
	own, haveOwn := c.own[j.id]
	ours := haveOwn && c.runsScheduledLocked(j, own)
	if c.unknown[j.id] && !ours {
		// The last leader left this job out of its truncated ledger: what
		// it did is unknown, and our own older entry could lead to a
		// duplicate. (With our own entry's run still going here, ours is
		// the latest.)
		return LedgerEntry{}, false
	}
	peer, havePeer := c.peer[j.id]
	switch {
	case !havePeer:
		return own, haveOwn
	case !haveOwn || newer(peer, own) && !ours:
		return peer, true
	default:
		return own, true
	}
}

// newestEntry returns the newest entry for j from any source (own or
// heard), whether or not a truncated ledger left j out since: what step
// must never start again. Must hold r.mu.
func (c *core) newestEntry(j *job) (LedgerEntry, bool) { return c.newestByID(j.id) }

// newestByID is newestEntry for any ledger id (a job's manual runs too).
// Must hold c.mu.
func (c *core) newestByID(id uint64) (LedgerEntry, bool) {
	own, haveOwn := c.own[id]
	peer, havePeer := c.peer[id]
	if havePeer && (!haveOwn || newer(peer, own)) {
		return peer, true
	}
	return own, haveOwn
}

// newer reports whether a is a later entry than b: a later instant, the
// same instant under a higher term, or the same run further along
// (Outcome.progress: ended rather than running, an outcome heard rather
// than interrupted).
func newer(a, b LedgerEntry) bool {
	if isServiceEntry(a) && isServiceEntry(b) && a.Term != b.Term {
		return a.Term > b.Term // a service's copies: by term first (serviceEntry)
	}
	if !a.Instant.Equal(b.Instant) {
		return a.Instant.After(b.Instant)
	}
	if a.Term != b.Term {
		return a.Term > b.Term
	}
	return a.Outcome.progress() > b.Outcome.progress()
}

// takeOver decides, for one job at the start of leadership term (taken
// over at takeover, decided at now, after the gathering window), which
// instants up to takeover the previous leaders already handled and which
// fell into the gap; j's manual run that a leader that is gone left
// running is concluded too (concludeManualLocked). Must hold r.mu.
func (c *core) takeOver(j *job, takeover, now time.Time, term uint64) takeoverPlan {
	log := c.logs.With("job", j.spec.Name, "term", term)
	up := takeover // where this leadership took the schedule up
	if j.pos.term == term {
		j.pos.decided = true
		up = maxTime(up, j.pos.cursor) // added by a reload: from the reload
	}
	c.concludeManualLocked(j, now, log)
	e, known := c.knownEntry(j)
	if !known {
		// Cold start: nothing before now is ours to run. Record where the
		// schedule was taken up, so that if this leadership ends before
		// the first instant, the next leader knows the instants after it
		// are missed ones (run-once), not never due.
		c.coldGapLocked(j, takeover, log)
		if _, ever := c.newestEntry(j); !ever {
			logColdStart(log, up)
		}
		c.setOwn(LedgerEntry{JobID: j.id, Instant: up.UTC().Truncate(time.Second), Outcome: OutcomeNone, Term: term})
		delete(c.unknown, j.id)
		return takeoverPlan{cursor: up}
	}
	plan := takeoverPlan{cursor: e.lastStarted()}
	h, held := c.heldLocked(j, now)
	held = held && h.entry.JobID == j.id && e.Outcome == OutcomeRunning &&
		h.entry.Instant.Equal(e.Instant) && h.entry.Term == e.Term
	switch {
	case held && h.presumed:
		// Started by a leader that may only be cut off: it may still be
		// going until its leader's stop has run its course (quiet.go).
		// Overlap applies to it meanwhile; lapse concludes it then.
		c.holds[j.id] = h
		log.Warn("jobs: previous leader's run may still be going on its node; waiting until it cannot be before concluding it (overlap policy applies meanwhile)",
			"node", h.from, "scheduled_at", e.Instant, "started_term", e.Term, "until", h.until)
	case held:
		// Still going on the node that started it, deposed without
		// stopping: not interrupted. Overlap applies to it (step); its
		// outcome is adopted when heard (so it is not made ours); if the
		// hold lapses, lapse decides.
		log.Info("jobs: previous leader's run still going on its node; overlap policy applies to it",
			"node", h.from, "scheduled_at", e.Instant, "started_term", e.Term)
	case e.Outcome == OutcomeRunning && !c.runsScheduledLocked(j, e):
		// Started by a leader that is gone, end unknown (a manual run of
		// ours going beside it changes nothing): named as the leader of
		// its term, or as its holder if a hold on it lapsed or was
		// released.
		node := c.leaderOfLocked(e.Term)
		if h, ok := c.holds[j.id]; ok && oneRun(h.entry, e) {
			node = h.from
		}
		e = c.interruptLocked(j, e, node)
		if j.spec.RerunInterrupted {
			plan.runNow, plan.rerun = e.Instant, true
			log.Warn("jobs: previous leader's run was interrupted; running it again (rerun_interrupted)",
				"node", node, "scheduled_at", e.Instant, "started_term", e.Term)
		} else {
			log.Warn("jobs: previous leader's run was interrupted; not running it again",
				"node", node, "scheduled_at", e.Instant, "started_term", e.Term)
		}
	default:
		c.setOwn(e)
	}

	// Instants that fell due since the last one started: nobody ran them.
	from, overtaken := e.lastStarted(), false
	if e.Term == term && e.Instant.After(takeover) {
		// This leadership's own run of an instant after the takeover,
		// started in the gathering window: the gap is counted from what
		// the leadership took over, and that later run overtook it.
		p, ok := c.takenOverLocked(j)
		if !ok {
			logColdStart(log, takeover) // nothing taken over
			return plan
		}
		c.concludeOvertakenLocked(j, p, now, log)
		from, overtaken = p.lastStarted(), true
	}
	latest, n := latestDue(j.sched, from, takeover)
	if n == 0 {
		return plan
	}
	if overtaken {
		j.skipped.Misfired += uint64(n)
		log.Warn("jobs: instants missed during failover; overtaken by a later instant already started",
			"scheduled_at", latest, "count", n, "started", e.Instant)
		return plan
	}
	// The older ones are coalesced into the latest, and skipped with a
	// line that names them (from, count); the latest's line names every
	// instant it decides (count, the latest last).
	j.skipped.Misfired += uint64(n - 1)
	if n > 1 {
		log.Warn("jobs: instants overtaken by a later one; skipped",
			"from", j.sched.Next(from), "count", n-1, "later", latest)
	}
	plan.cursor = latest
	late, over := tooLate(&j.spec, j.sched, latest, now)
	switch {
	case j.spec.Misfire == MisfireSkip:
		j.skipped.Misfired++
		log.Warn("jobs: instant missed during failover; skipped (misfire: skip)", "scheduled_at", latest, "count", n, "late", late)
	case over:
		j.skipped.Misfired++
		log.Warn("jobs: instant missed during failover; too late to run (misfire_grace)",
			append([]any{"scheduled_at", latest, "count", n, "late", late}, graceAttrs(&j.spec, j.sched, latest)...)...)
	case plan.rerun:
		// The interrupted rerun goes first; the missed instant is coalesced
		// into it rather than run twice back to back.
		j.skipped.Misfired++
		log.Warn("jobs: instant missed during failover; not run: coalesced into the interrupted run's rerun",
			"scheduled_at", latest, "count", n, "rerun_scheduled_at", plan.runNow)
	default:
		plan.runNow, plan.rerun = latest, false
		log.Info("jobs: instant missed during failover; running it once now (misfire: run-once)",
			"scheduled_at", latest, "count", n, "late", late)
	}
	return plan
}

// coldGapLocked skips, logged and counted, the instants of j due up to
// takeover since the last one this node heard of, when a truncated ledger
// left j out since and the takeover starts it cold: the last leader may
// have run any of them, so none runs, but none goes unsaid. Must hold
// r.mu.
func (c *core) coldGapLocked(j *job, takeover time.Time, log lineLog) {
	e, ok := c.newestEntry(j)
	if !c.unknown[j.id] || !ok {
		return
	}
	if latest, n := latestDue(j.sched, e.Instant, takeover); n > 0 {
		j.skipped.Misfired += uint64(n)
		log.Warn("jobs: instants missed during failover; not run: a truncated ledger left this job out, so what the last leader ran is unknown",
			"from", j.sched.Next(e.Instant), "scheduled_at", latest, "count", n, "ledger_instant", e.Instant)
	}
}

// logColdStart says that a takeover found no run of its job known in the
// cluster: no instant before from is owed, and the schedule starts there.
func logColdStart(log lineLog, from time.Time) {
	log.Info("jobs: no run of this job known in the cluster; its schedule starts at the takeover", "schedule_from", from)
}

// takenOverLocked returns the newest entry of j the current leadership
// took over (position.inherited); false if none, or if a truncated ledger
// left j out. Must hold r.mu.
func (c *core) takenOverLocked(j *job) (LedgerEntry, bool) {
	p := j.pos.inherited
	if c.unknown[j.id] || p.Instant.IsZero() {
		return LedgerEntry{}, false
	}
	return p, true
}

// concludeOvertakenLocked is takeOver's rule for p, the run of j the
// leadership took over, when its own later run overtook it in the
// gathering window (heard only after that start): if p is still running,
// nobody holds it and this process does not run it, its leader is gone.
// In quorum mode its entry then never reached a majority before this
// node's election (a majority's votes carry every committed entry), so it
// never started. It is concluded interrupted (ledger, history, a WARN
// naming the instant) and never run again, rerun_interrupted or not: a
// later instant already started, and the schedule only goes forward. A
// run its holder still runs is left to the holder. Must hold r.mu.
func (c *core) concludeOvertakenLocked(j *job, p LedgerEntry, now time.Time, log lineLog) {
	if p.Outcome != OutcomeRunning || c.runsScheduledLocked(j, p) {
		return
	}
	node := c.leaderOfLocked(p.Term)
	if h, ok := c.holds[j.id]; ok && oneRun(h.entry, p) {
		if !h.released && now.Before(h.until) {
			return // its holder runs it and sends its outcome
		}
		node = h.from
	}
	c.interruptLocked(j, p, node)
	log.Warn("jobs: previous leader's run was interrupted; not running it again: a later instant already started",
		"node", node, "scheduled_at", p.Instant, "started_term", p.Term)
}

// concludeManualLocked is takeOver's rule for j's manual runs: the newest
// one still running that nobody holds at now and this process does not run
// was started by a leader that is gone (it died or was cut off while
// leading, or it is this node's previous process). It is interrupted
// (ledger, history, a WARN naming the node), and never run again: a manual
// run is no scheduled instant, and a one-off action must not happen twice.
// A held one is left to its holder (lapse). Must hold r.mu.
func (c *core) concludeManualLocked(j *job, now time.Time, log lineLog) {
	id := ManualJobIDOf(j.spec.Name)
	e, ok := c.newestByID(id)
	if !ok || e.Outcome != OutcomeRunning || c.runsManualLocked(j, e) {
		return
	}
	node := c.leaderOfLocked(e.Term)
	if h, ok := c.holds[id]; ok && oneRun(h.entry, e) {
		if now.Before(h.until) {
			log.Info("jobs: previous leader's manual run still going on its node",
				"node", h.from, "scheduled_at", e.Instant, "started_term", e.Term)
			return
		}
		node = h.from // lapsed or released before this takeover
	}
	if h, ok := c.presumedLocked(j, id, now); ok {
		c.holds[id] = h
		log.Warn("jobs: previous leader's manual run may still be going on its node; waiting until it cannot be before concluding it",
			"node", h.from, "scheduled_at", e.Instant, "started_term", e.Term, "until", h.until)
		return
	}
	c.interruptLocked(j, e, node)
	log.Warn("jobs: previous leader's manual run was interrupted; not running it again (manual runs never are)",
		"node", node, "scheduled_at", e.Instant, "started_term", e.Term, "manual", true)
}

// interruptLocked concludes e, a run of j (scheduled or manual, by its
// ledger id) that node started and left running, gone: interrupted in this
// node's ledger and in its history. The record is marked heard, as the one
// a follower files from this node's ledger (hearRuns) and as that ledger
// relayed back would file here, so either is the same record (sameRun), and
// the run's own outcome, heard later (from a node that was only cut off),
// replaces it (History.Add). A hold on e its holder released is recorded
// as lapse records it, so that the holder's later word that it runs e (a
// stale copy) makes no hold. It returns e concluded. Must hold r.mu.
func (c *core) interruptLocked(j *job, e LedgerEntry, node string) LedgerEntry {
	if h, ok := c.holds[e.JobID]; ok && h.released && oneRun(h.entry, e) {
		c.released[e.JobID] = h
	}
	e = e.ended(OutcomeInterrupted)
	c.setOwn(e)
	c.history.Add(RunRecord{Job: j.spec.Name, ScheduledAt: e.Instant, Term: e.Term, Outcome: OutcomeInterrupted,
		Node: node, Manual: e.JobID != j.id, Heard: true, ExitCode: -1})
	return e
}

// runsManualLocked reports whether this process runs the manual run of j
// that e names. Must hold r.mu.
func (c *core) runsManualLocked(j *job, e LedgerEntry) bool {
	for _, rec := range c.manualRuns {
		if rec.Job == j.spec.Name && rec.Term == e.Term && rec.ScheduledAt.Equal(e.Instant) {
			return true
		}
	}
	return false
}

// runsScheduledLocked reports whether this process runs the scheduled run
// of j that e names: the scheduled counterpart of runsManualLocked (j.active
// counts manual runs too). Must hold r.mu.
func (c *core) runsScheduledLocked(j *job, e LedgerEntry) bool {
	return e.JobID == j.id && slices.ContainsFunc(j.schedRuns, func(s LedgerEntry) bool { return oneRun(s, e) })
}

// leaderOfLocked names the node that led term, as this Runner saw it
// (OnNewLeader: the leaders it followed, and itself; RestoreLedger: the
// terms its previous processes led): "" if it did not see that
// leadership. It is the one place that says who led a term: it names
// nodes in logs and history, and tells quietLocked a run of this node's
// previous process (which died with it) from another node's. It is
// exact, never read from the term's tag, which another id can share;
// and a hold is its holder's word (LedgerEntry.Held), not this. Must hold
// r.mu.
func (c *core) leaderOfLocked(term uint64) string { return c.leaders[term] }

// setOwn makes e this node's entry under its ledger id unless its own is
// newer (a run started during the gathering window). Must hold c.mu.
func (c *core) setOwn(e LedgerEntry) {
	if cur, ok := c.own[e.JobID]; !ok || !newer(cur, e) {
		c.own[e.JobID] = keepStop(cur, e)
	}
}

func (r *Runner) count(j *job, f func(*Counters)) {
	r.mu.Lock()
	f(&j.skipped)
	r.unlock()
}

// ledgerChanged re-encodes the ledger and tells the elector. Must hold
// r.mu; the callback may call Ledger, which reads the published copy
// without locking.
func (c *core) ledgerChanged() {
	c.published.Store(c.encodeBothLocked())
	c.emit(effect{kind: effectPublish})
}

// maxScan is how many instants latestDue steps through before it starts
// jumping ahead.
const maxScan = 10000

// latestDue returns the latest instant of sched in (after, now] and how
// many instants fell in that interval (0: none, latest is zero). For a
// huge interval (an @every 1s job and a ledger days old) it jumps ahead,
// every maxScan instants, to 1/16 of the remaining distance before now, so
// it always ends quickly; the count is then a lower bound. Every schedule
// is absolute (@every too), so a jump never shifts the instants.
func latestDue(sched Schedule, after, now time.Time) (time.Time, int) {
	var latest time.Time
	n := 0
	for t := sched.Next(after); !t.IsZero() && !t.After(now); t = sched.Next(t) {
		latest = t
		n++
		if n%maxScan == 0 {
			if jump := now.Add(-now.Sub(t) / 16); jump.After(t) {
				t = jump
			}
		}
	}
	return latest, n
}
