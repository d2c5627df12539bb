package jobs

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"
)

// UpdateResult names the jobs an Update added, removed and changed.
type UpdateResult struct {
	Added, Removed, Changed []string
}

// Empty reports whether the update changed nothing.
func (u UpdateResult) Empty() bool {
	return len(u.Added)+len(u.Removed)+len(u.Changed) == 0
}

// Update replaces the jobs with specs while the Runner keeps going: a
// config reload. Jobs are matched by name (matchJobs: a job's identity).
// While this node leads:
//   - a changed job's schedule goes on from where it stood, with the new
//     definition: an instant its old schedule made due before the reload
//     and its old loop had not started yet runs once, now, with the new
//     definition; after that the new schedule's instants after the reload;
//     its runs in progress go on as they started; a takeover decision still
//     pending (within the gathering window) is made at the window's end,
//     with the new definition;
//   - an added job is taken over as if the leadership had begun with it:
//     its ledger entry, if any leader ran it before, is honoured (no
//     instant it names runs again), the takeover decides the instants due
//     up to the leadership's start (within the gathering window, at the
//     window's end), and the instants due between the leadership's start
//     and the reload are not run: its schedule starts at the reload; runs
//     of its name still going, here (takeBackLocked) or held elsewhere,
//     are its own;
//   - a removed job is no longer scheduled (an instant due before the
//     reload that its loop had not started yet is not run, and the log
//     says so), and its runs in progress end as if leadership were lost
//     (on_leader_loss: cancel stops them, finish lets them complete).
//
// Each added and removed job is logged (an added one with its ledger entry
// and first instant). Counters, the last run and the ledger entry of a
// kept job carry over. Invalid specs are refused with an error and change
// nothing.
func (r *Runner) Update(specs []Spec) (UpdateResult, error) {
	if err := ValidateAll(specs); err != nil {
		return UpdateResult{}, fmt.Errorf("jobs: %w", err)
	}
	fresh, err := newJobs(specs)
	if err != nil {
		return UpdateResult{}, err
	}
	now := time.Now()
	r.mu.Lock()
	defer r.unlock()
	leading := r.term != 0 && !r.closed && r.leaderCtx != nil && r.leaderCtx.Err() == nil
	m := matchJobs(r.jobs, fresh)
	for _, c := range m.changed {
		old := c.old.sched
		c.old.spec, c.old.sched = c.spec, c.sched
		if leading {
			r.takeUpLocked(c.old, now)
			r.reloadLocked(c.old, old, now)
			r.startLoopLocked(r.term, c.old)
		}
	}
	for _, oj := range m.removed {
		delete(r.byID, oj.id)
		if oj.stopLoop != nil {
			oj.stopLoop()
		}
		if oj.stopRuns != nil {
			oj.stopRuns() // runs follow on_leader_loss: finish runs use stopCtx
		}
		if leading {
			r.removedLocked(oj, now)
		}
		if oj.active > 0 {
			r.gone[oj.spec.Name] = oj
		}
	}
	for _, nj := range m.added {
		renamedFrom := m.renamedFrom[nj]
		nj = r.takeBackLocked(nj, m.list)
		r.byID[nj.id] = nj
		if leading {
			nj.runCtx, nj.stopRuns = context.WithCancel(r.leaderCtx)
			r.addedLocked(nj, renamedFrom, now)
			r.startLoopLocked(r.term, nj)
		}
	}
	r.jobs = m.list
	if leading && !m.res.Empty() {
		r.ledgerChanged()
	}
	return m.res, nil
}

// reloadMatch is how a reload's jobs relate to the running ones.
type reloadMatch struct {
	res UpdateResult
	// list is the new job list, in the file's order: the running job for
	// a kept name, the fresh one for an added name.
	list []*job
	// changed are kept jobs whose definition changed, with the new one.
	changed []changedJob
	added   []*job
	removed []*job
	// renamedFrom names, for an added job, a removed job with the same
	// definition under another name: what the user most likely renamed.
	renamedFrom map[*job]string
}

type changedJob struct {
	old   *job
	spec  Spec
	sched Schedule
}

// matchJobs matches the jobs of a reload (fresh) with the running ones.
// A job's identity is its name, and only its name: the name is the key of
// its ledger entry (JobIDOf) on every node, of its history, counters,
// metrics and logs. A kept name is the same job whatever else changed: its
// schedule goes on from where it stood and no instant it ran runs again. A
// renamed job is a new job: the old name is removed (its ledger entry
// stays in the ledger, and comes back with the name), the new one added
// with its own ledger entry, or none. Definitions are compared only to say
// in the log that an added job looks like a removed one renamed.
func matchJobs(running, fresh []*job) reloadMatch {
	m := reloadMatch{renamedFrom: map[*job]string{}}
	old := make(map[string]*job, len(running))
	for _, j := range running {
		old[j.spec.Name] = j
	}
	for _, nj := range fresh {
		oj, kept := old[nj.spec.Name]
		if !kept {
			m.res.Added = append(m.res.Added, nj.spec.Name)
			m.added = append(m.added, nj)
			m.list = append(m.list, nj)
			continue
		}
		delete(old, nj.spec.Name)
		m.list = append(m.list, oj)
		if !reflect.DeepEqual(oj.spec, nj.spec) {
			m.res.Changed = append(m.res.Changed, nj.spec.Name)
			m.changed = append(m.changed, changedJob{old: oj, spec: nj.spec, sched: nj.sched})
		}
	}
	for _, oj := range running {
		if _, removed := old[oj.spec.Name]; removed {
			m.res.Removed = append(m.res.Removed, oj.spec.Name)
			m.removed = append(m.removed, oj)
		}
	}
	for _, nj := range m.added {
		for _, oj := range m.removed {
			if sameDefinition(nj.spec, oj.spec) {
				m.renamedFrom[nj] = oj.spec.Name
				break
			}
		}
	}
	return m
}

// sameDefinition reports whether a and b are alike but for their names.
func sameDefinition(a, b Spec) bool {
	a.Name = b.Name
	return reflect.DeepEqual(a, b)
}

// takeBackLocked returns the job to add for nj: nj, or, if a reload
// removed a job of nj's name whose runs still go on (r.gone), that job
// with nj's definition, in nj's place in list. A job is its name, so
// those runs are the added job's own: its overlap policy applies to them,
// and its takeover finds them running here, not interrupted. Its position
// starts afresh, as any added job's (takeUpLocked). Must hold r.mu.
func (r *Runner) takeBackLocked(nj *job, list []*job) *job {
	oj := r.gone[nj.spec.Name]
	if oj == nil {
		return nj
	}
	delete(r.gone, nj.spec.Name)
	oj.spec, oj.sched, oj.pos = nj.spec, nj.sched, position{}
	list[slices.Index(list, nj)] = oj
	return oj
}

// goneByLedgerID returns the job of c.gone whose scheduled or manual runs
// the ledger id names, nil if none. Must hold r.mu.
func (c *core) goneByLedgerID(id uint64) *job {
	for _, j := range c.gone {
		if j.id == id || ManualJobIDOf(j.spec.Name) == id {
			return j
		}
	}
	return nil
}

// addedLocked takes up j, added by a reload, in the current leadership
// and logs it: its ledger entry (the one it continues) or none, and its
// first instant, or that the takeover decides at the gathering window's
// end. Must hold r.mu.
func (r *Runner) addedLocked(j *job, renamedFrom string, now time.Time) {
	attrs := []any{"job", j.spec.Name, "term", r.term}
	if renamedFrom != "" {
		attrs = append(attrs, "renamed_from", renamedFrom)
	}
	if e, ok := r.newestEntry(j); ok {
		attrs = append(attrs, "ledger_instant", e.Instant, "ledger_outcome", e.Outcome, "ledger_term", e.Term)
	} else {
		attrs = append(attrs, "ledger", "none: a new job")
	}
	r.takeUpLocked(j, now)
	switch {
	case !j.pos.decided:
		attrs = append(attrs, "takeover", "decided when the gathering window ends")
	case !j.pos.due.instant.IsZero():
		attrs = append(attrs, "first_instant", j.pos.due.instant, "rerun", j.pos.due.rerun)
	default:
		attrs = append(attrs, "first_instant", j.sched.Next(j.pos.cursor))
	}
	r.log.Info("jobs: job added by reload", attrs...)
}

// removedLocked logs j, removed by a reload while leading, and the
// instant its loop owed and had not started, if any: it is not run. Must
// hold r.mu.
func (r *Runner) removedLocked(j *job, now time.Time) {
	d := j.pos.due
	if d.instant.IsZero() && j.pos.term == r.term {
		if latest, n := latestDue(j.sched, j.pos.cursor, now); n > 0 {
			d.instant = latest
		}
	}
	j.pos.due = dueStart{}
	r.log.Info("jobs: job removed by reload", "job", j.spec.Name, "term", r.term, "running", j.active)
	if !d.instant.IsZero() {
		r.log.Warn("jobs: job removed by reload before its due instant started; not run",
			"job", j.spec.Name, "scheduled_at", d.instant, "term", r.term, "rerun", d.rerun)
	}
}
