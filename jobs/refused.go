package jobs

import "time"

// A run refused before it started. A scheduled run is recorded running in
// the cluster (Cluster.Commit) before its process starts, and the guard
// is asked again right before the exec (mayStart). When the guard refuses
// the first attempt, no attempt of the instant started: it is not
// concluded cancelled, which would leave it run by nobody, but decided
// again, as an instant the guard refused when it came due is (start.go):
//
//   - while the leadership it was decided in goes on, its loop owes it
//     (a due start, refused): asked about every guardRetry, started late
//     once this node may act, unless a later instant comes due first or
//     misfire_grace passes. Its entry stays running meanwhile: it names
//     the start this leadership still owes, under the same identity
//     (instant, term) as the start it makes.
//   - once it is given up (the leadership ended, lanleader stops, a later
//     instant or misfire_grace overtook it), its entry becomes refused
//     (unstartLocked): the instant did not start, and the next leader,
//     this node's or another's, decides it again as a missed instant
//     (takeOver, misfire). A node cut off before it could say so leaves
//     it running: its successor takes it for interrupted, never for two.
//
// A manual run refused so is concluded cancelled, as before: a one-off
// request is answered, not deferred.

// oweRefused is run's end for a scheduled run of instant under term whose
// first attempt the guard refused (why; decidedIn: the leadership it was
// decided in goes on): oweRefusedLocked, under r.mu. Must not hold r.mu.
func (r *Runner) oweRefused(j *job, instant time.Time, term uint64, decidedIn bool, why string) {
	r.mu.Lock()
	defer r.unlock()
	r.oweRefusedLocked(j, instant, term, decidedIn && !r.closed, why)
}

// oweRefusedLocked is the rule for that run: no run, and the instant is
// owed again by the loop of this node's leadership, if it leads and has
// taken the job over (the same leadership, or a later one that decided
// its takeover already: an undecided takeover decides it from the
// ledger), else given up for the next leadership. Must hold r.mu.
func (c *core) oweRefusedLocked(j *job, instant time.Time, term uint64, decidedIn bool, why string) {
	j.active--
	c.dropSchedRunLocked(j, instant, term)
	c.runEndedLocked()
	log := c.logs.With("job", j.spec.Name, "term", term)
	same := decidedIn && j.pos.term == term
	if !same {
		c.unstartLocked(j, instant, term) // a later leadership's start is a run of its own
	}
	d, leads := j.pos.due, c.term != 0 && !c.draining && j.pos.term == c.term && c.byID[j.id] == j
	switch {
	case leads && (same || j.pos.decided) && d.instant.IsZero():
		j.pos.due = dueStart{instant: instant, refused: true}
		msg := "jobs: not starting yet: this node cannot currently act as leader; trying again until it can"
		if !same {
			msg = "jobs: not started in the leadership it was decided in, which ended; this leadership decides it again"
		}
		log.Warn(msg, append([]any{"scheduled_at", instant, "rerun", false, "now_term", c.term},
			graceAttrs(&j.spec, j.sched, instant)...)...)
		c.emit(effect{kind: effectWake, job: j})
	case leads && d.instant.After(instant):
		c.unstartLocked(j, instant, term)
		j.skipped.Refused++
		log.Warn("jobs: not started: this node could not act as leader before a later instant came due",
			"scheduled_at", instant, "rerun", false, "later", d.instant)
	default:
		c.unstartLocked(j, instant, term)
		j.skipped.Refused++
		log.Warn("jobs: not started: "+why+"; the next leadership decides this instant", "scheduled_at", instant)
	}
}

// unstartLocked gives up this leadership's start of j's instant: if j's
// entry is still the running one of that start (recorded, never started),
// it becomes refused and goes out. Must hold r.mu.
func (c *core) unstartLocked(j *job, instant time.Time, term uint64) {
	e, ok := c.own[j.id]
	if !ok || e.Outcome != OutcomeRunning || !oneRun(e, LedgerEntry{Instant: instant, Term: term}) || c.runsScheduledLocked(j, e) {
		return
	}
	c.own[j.id] = e.ended(OutcomeRefused)
	c.ledgerChanged()
}

// owedLocked reports whether e is the entry of the start j's loop owes
// (d, refused after it was recorded): not a start made. Must hold r.mu.
func (c *core) owedLocked(j *job, d dueStart, e LedgerEntry) bool {
	return d.refused && e.Outcome == OutcomeRunning && e.Term == j.pos.term && sameInstant(j, e, d.instant) &&
		!c.runsScheduledLocked(j, e)
}
