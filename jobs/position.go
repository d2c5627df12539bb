package jobs

import (
	"context"
	"time"
)

// position is where one job's schedule stands in the current leadership:
// what its scheduling loop works from. It lives in the job, under
// Runner.mu, not in the loop, so a loop that a reload rebuilds takes over
// exactly where the old one stood, and an old loop replaced between its
// timer firing and its taking the lock leaves that instant to the new one.
// No loop plans from "now".
type position struct {
	// term is the leadership the position belongs to; a new leadership
	// starts a new one from the ledger (takeUpLocked).
	term uint64
	// takeover is when that leadership began: the instants due up to it
	// are the takeover's to decide (takeOver), once (decided). Until then,
	// within the gathering window, the loop schedules only later ones.
	takeover time.Time
	decided  bool
	// inherited is the newest entry the leadership took over: from this
	// node's own entry and its pool when it took the job up, and from every
	// entry of another term heard since (inheritLocked). When the
	// leadership's own runs overtook it before the decision, the failover
	// gap starts at the last instant it says started (lastStarted), and a
	// run it leaves running is concluded (concludeOvertakenLocked); by then
	// the pool may hold only a relay of those runs.
	inherited LedgerEntry
	// cursor is the newest instant accounted for: started, skipped with a
	// logged reason, or made due. The loop waits for sched.Next(cursor).
	cursor time.Time
	// due is a start decided and not made yet (zero instant: none).
	due dueStart
}

// dueStart is a start a scheduling loop owes: the takeover's misfire run
// or rerun, a lapsed hold's rerun, an instant an old loop left behind at a
// reload, or an instant the guard refused, asked about again every
// guardRetry until this node can act, a later instant comes due, or
// misfire_grace passes.
type dueStart struct {
	instant time.Time
	// rerun marks the second run of an interrupted instant.
	rerun bool
	// refused: the guard said no (logged once).
	refused bool
}

// guardRetry is how often a scheduling loop asks the guard again about a
// start it refused: well within a claim window or a lease renewal, the
// usual reasons a leader cannot act for a moment.
const guardRetry = 100 * time.Millisecond

// takeUpLocked makes j's position this leadership's, at now: at the
// leadership's start, or when a reload adds j. A job a reload adds is
// taken over as one the leadership began with (its takeover is the
// leadership's start): the takeover decides the instants due up to then,
// from every ledger heard; the instants due between the leadership's start
// and the reload are not run (the job was not configured then), so its
// schedule goes on from the reload. Until the takeover is decided, a loop
// started within the gathering window leaves the decision to the window's
// end (decide); after the window it is made now. Must hold r.mu.
func (c *core) takeUpLocked(j *job, now time.Time) {
	if j.pos.term != c.term {
		j.pos = position{term: c.term, takeover: c.leadStart, cursor: now}
		if e, ok := c.own[j.id]; ok {
			j.pos.inherited = e
			if e.lastStarted().After(now) {
				j.pos.cursor = e.lastStarted() // started already (the clock went back): not again
			}
		}
		if e, ok := c.peer[j.id]; ok {
			c.inheritLocked(e)
		}
	}
	if !j.pos.decided && !now.Before(c.gatherUntil) {
		c.applyLocked(j, c.takeOver(j, j.pos.takeover, now, c.term))
	}
}

// inheritLocked notes e, an entry this node heard, in the position of its
// job: one of another term than this node's current leadership is taken
// over (position.inherited; for one run, its end over running). Must hold
// r.mu.
func (c *core) inheritLocked(e LedgerEntry) {
	j := c.byID[e.JobID]
	if j == nil || c.term == 0 || j.pos.term != c.term || e.Term == c.term {
		return
	}
	e.Held = false // its sender's word about itself (holdLocked)
	if newer(e, j.pos.inherited) {
		j.pos.inherited = e
	}
}

// applyLocked takes up a takeover's plan for j: the schedule goes on after
// plan.cursor (never back), and plan.runNow becomes due. A start already
// due (an instant after the takeover the guard refused in the gathering
// window) is later than the plan's, which it overtakes. Must hold r.mu.
func (c *core) applyLocked(j *job, plan takeoverPlan) {
	if plan.cursor.After(j.pos.cursor) {
		j.pos.cursor = plan.cursor
	}
	switch {
	case plan.runNow.IsZero():
	case j.pos.due.instant.IsZero():
		j.pos.due = dueStart{instant: plan.runNow, rerun: plan.rerun}
	default:
		j.skipped.Misfired++
		c.logs.Warn("jobs: instant missed during failover; overtaken by a later instant not started yet",
			"job", j.spec.Name, "scheduled_at", plan.runNow, "rerun", plan.rerun, "due", j.pos.due.instant)
	}
}

// reloadLocked keeps j's position across a reload that changes j: the
// instant its old schedule made due and its old loop had not decided yet
// (a reload landing between a timer firing and the start) becomes due for
// the new loop, which starts it with the new definition (of several, the
// latest: it overtakes the others and a start already due); the new
// schedule goes on from the reload. Must hold r.mu.
func (c *core) reloadLocked(j *job, old Schedule, now time.Time) {
	d, base := j.pos.due, maxTime(j.pos.due.instant, j.pos.cursor)
	if latest, n := latestDue(old, base, now); n > 0 {
		if d.instant.IsZero() { // the old loop's instant
			base = old.Next(base)
			d, n = dueStart{instant: base}, n-1
			j.pos.due = d
		}
		if n > 0 {
			for _, v := range c.overtakeLocked(j, old, d, base, latest, n) {
				c.logs.Log(context.Background(), v.level, v.msg, append([]any{"job", j.spec.Name}, v.attrs...)...)
			}
		}
	}
	if now.After(j.pos.cursor) {
		j.pos.cursor = now
	}
}

// accountLocked records that instant is decided (started, or skipped with
// a logged reason): the due start is done and the schedule goes on after
// it. Must hold r.mu.
func (j *job) accountLocked(instant time.Time) {
	j.pos.due = dueStart{}
	if instant.After(j.pos.cursor) {
		j.pos.cursor = instant
	}
}
