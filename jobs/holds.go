package jobs

import (
	"context"
	"time"

	"github.com/lanleader/lanleader/internal/proc"
)

// Runs held elsewhere.
//
// A leader that loses leadership without stopping (a lost election, a
// healed partition, a preemption) lets its on_leader_loss: finish runs
// complete. While any run of this node is going it holds
// (Cluster.SetHolding); the elector then marks what it sends as a
// follower, and sends its ledger on every heartbeat of its leader and once
// more when the last run ends (udp: FlagHolding). Every node records, per
// job, the running entry a holder says it runs (AdoptLedgerFrom): a hold,
// renewed by every such message for HoldLapse. A holder names those runs
// entry by entry (LedgerEntry.Held: the runs its current process started
// and has not seen end); any other running entry of its ledger, a run it
// relays or one its previous process started, makes no hold, whatever
// node's tag its term carries. Who holds a run is thus the holder's own
// word, never read from a term: two node ids whose terms share a tag
// cannot take each other's runs for their own. A new leader does not
// count a held run as interrupted, and its overlap policy applies to it as
// to a run of its own.
//
// What a message says of its sender's runs is its HoldWord: a claim, vote
// or LEDGER marked holding names the runs held (HoldsMarked); one without
// the mark says its sender runs none (HoldsNothing); a leader's messages
// (heartbeat, answer, resign) say nothing of holds (SaysNoHolds): a
// holder that leads again still runs its runs, and its heartbeats carry no
// marks, so their absence there is no release.
//
// A hold ends in one of three ways:
//   - its holder's ledger names the run's outcome: adopted, nothing more;
//   - its holder says it does not run it (HoldsNothing, or a marked ledger
//     that does not name it held) while what this node knows of the run
//     still says running: the run ended without its outcome reaching
//     anyone (typically the holder restarted, with a new process that
//     never ran it) — released; the run died with the holder's previous
//     process, and counts as going for a kill's settling time
//     (proc.KillSettle) after the word;
//   - it lapses unrenewed: the holder died, is cut off, or leads again
//     and paused; a run that may still be going (quiet.go) is presumed
//     going until it cannot be.
//
// In the last two the leader counts the run as interrupted (lapse, the one
// place of that rule): its ledger entry says so, its history has it, a WARN
// names job, instant and node, and rerun_interrupted runs it again within
// misfire_grace. A node that does not lead leaves the hold lapsed; its
// takeover, if any, finds the run still running and counts it interrupted
// then. So does a leader that can no longer act as one when a release
// comes. Once a leader concluded, the holder's later word that it runs the
// run it released is stale (an old packet, a restored ledger re-sent) and
// makes no hold. A marked ledger truncated without the run says nothing
// about it.

// HoldWord is what a message that carries a ledger says of its sender's
// own runs (holds.go). The zero value says nothing.
type HoldWord uint8

const (
	// SaysNoHolds: a leader's message (heartbeat, answer, resign). A
	// leader's runs are its own business: it neither holds nor releases
	// any, whatever its ledger marks.
	SaysNoHolds HoldWord = iota
	// HoldsNothing: a claim, vote or LEDGER without the holding mark: its
	// sender, not leading, runs none of the runs it held.
	HoldsNothing
	// HoldsMarked: a claim, vote or LEDGER marked holding: its sender,
	// not leading, runs the entries its ledger marks held
	// (LedgerEntry.Held), and no other.
	HoldsMarked
)

// hold is a run another node said it still runs.
type hold struct {
	// from is the holder.
	from string
	// entry is the running entry it announced.
	entry LedgerEntry
	// until is when the hold lapses unless renewed.
	until time.Time
	// released is set when from said it does not run it while no outcome
	// of it had reached this node; until is then a kill's settling time
	// after it said so, when the run can no longer be going.
	released bool
	// presumed is set when the run counts as going without a word from
	// from, until it can no longer be (quiet.go); until is then that time.
	presumed bool
}

// AdoptLedgerFrom adopts a ledger heard from node from, like AdoptLedger,
// and records what word, the message's, says about from's own runs: with
// HoldsMarked, each held entry (LedgerEntry.Held) is a run going on from,
// held for ClusterTiming.HoldLapse, and any of from's holds its ledger does
// not name held ends (released if no outcome of it is known); with
// HoldsNothing, from runs nothing: all its holds end so; with SaysNoHolds,
// only the holds whose outcome the ledger brings end. Entries not held (a
// relayed pool) never make a hold.
func (r *Runner) AdoptLedgerFrom(from string, word HoldWord, b []byte) error {
	l, err := DecodeLedger(b)
	if err != nil {
		return err
	}
	now := time.Now()
	r.mu.Lock()
	r.hearLocked(from, word, l, now)
	r.unlock()
	return nil
}

// hearLocked is AdoptLedgerFrom's rule for l, heard from node from at now.
func (c *core) hearLocked(from string, word HoldWord, l Ledger, now time.Time) {
	c.adoptLocked(l)
	if from != "" && from != c.node {
		c.holdLocked(from, word, l, now)
	}
}

// holdLocked renews or ends from's holds per its ledger l and word: the
// one place that decides a hold's release. Must hold r.mu.
func (c *core) holdLocked(from string, word HoldWord, l Ledger, now time.Time) {
	holding := word == HoldsMarked
	renewed := map[uint64]bool{}
	named := map[uint64]bool{}
	for _, e := range l.Entries {
		named[e.JobID] = true
		if !holding || !e.Held {
			continue
		}
		e.Held = false
		if rel, ok := c.released[e.JobID]; ok && rel.from == from && oneRun(rel.entry, e) {
			continue // it said it no longer runs it: a stale copy
		}
		// A run of a job this node does not run now is held all the same:
		// the holder's word does not depend on this node's config, and a
		// reload may add the job back (its name) while the run goes on.
		j, manual := c.jobByLedgerID(e.JobID)
		if old, had := c.holds[e.JobID]; j != nil && (!had || old.released || !oneRun(old.entry, e)) {
			c.logs.Info("jobs: a run of this job is still going on another node", "job", j.spec.Name,
				"node", from, "scheduled_at", e.Instant, "started_term", e.Term, "manual", manual)
			c.emit(effect{kind: effectWake, job: j})
		}
		c.holds[e.JobID] = hold{from: from, entry: e, until: now.Add(c.timing.HoldLapse)}
		renewed[e.JobID] = true
	}
	for id, h := range c.holds {
		switch {
		case h.from != from || renewed[id] || h.released:
		case holding && l.Truncated && !named[id]:
			// Left out to fit: no word on this run.
		case (word == SaysNoHolds || h.presumed) && c.stillRunning(id, h.entry):
			// A leader's message: its runs are its own, whatever its
			// ledger marks; no word of a presumed run's holder made it.
		case c.stillRunning(id, h.entry):
			// It ran in a process of from's that is gone (from restarted:
			// its new process never ran it) and died with it, by now plus
			// a kill's settling time (quiet.go's rule for this node's own
			// previous process); until then it may still be going.
			h.released, h.until = true, now.Add(proc.KillSettle)
			c.holds[id] = h
			if j, _ := c.jobByLedgerID(id); j != nil {
				c.emit(effect{kind: effectWake, job: j}) // its loop, if leading, concludes (lapse)
			}
		default:
			delete(c.holds, id) // its outcome was heard, or a later run superseded it
		}
	}
}

// wake tells j's scheduling loop that its holds changed.
func wake(j *job) {
	select {
	case j.holdWake <- struct{}{}:
	default:
	}
}

// oneRun reports whether a and b are entries of one run: one instant
// under one term.
func oneRun(a, b LedgerEntry) bool { return a.Instant.Equal(b.Instant) && a.Term == b.Term }

// stillRunning reports whether the newest entry this node knows under
// ledger id is run's, still running: no outcome of it and no later run.
// Must hold r.mu.
func (c *core) stillRunning(id uint64, run LedgerEntry) bool {
	e, ok := c.newestByID(id)
	return ok && oneRun(e, run) && e.Outcome == OutcomeRunning
}

// holdIDs are the ledger ids of j's runs a hold can be on: its scheduled
// and its manual runs (overlap applies across both).
func holdIDs(j *job) [2]uint64 { return [2]uint64{j.id, ManualJobIDOf(j.spec.Name)} }

// heldLocked returns a live hold at now on a run of j, scheduled or manual,
// if any: one its holder renews, or, while this node leads, a previous
// leader's run that may still be going (presumedLocked). Must hold r.mu.
func (c *core) heldLocked(j *job, now time.Time) (hold, bool) {
	for _, id := range holdIDs(j) {
		if h, ok := c.holds[id]; ok && now.Before(h.until) {
			return h, true
		}
	}
	for _, id := range holdIDs(j) {
		if h, ok := c.presumedLocked(j, id, now); ok {
			return h, true
		}
	}
	return hold{}, false
}

// holdUntil returns when the first of the holds on j's runs, scheduled or
// manual, lapses (zero if none), for its scheduling loop.
func (r *Runner) holdUntil(j *job) time.Time {
	r.mu.Lock()
	defer r.unlock()
	var until time.Time
	for _, id := range holdIDs(j) {
		if h, ok := r.holds[id]; ok && (until.IsZero() || h.until.Before(until)) {
			until = h.until
		}
	}
	return until
}

// lapse ends j's holds, scheduled and manual, that lapsed unrenewed or that
// their holder released without an outcome, while this node leads (after
// the takeover decision): a run still running as far as this node knows is
// interrupted at that point, and a scheduled one runs again if the job has
// rerun_interrupted and the instant may still start (misfire.go): the
// rerun becomes the loop's due start, which its next step makes. A manual
// run is never run again. A hold that lapsed unrenewed on a run that may
// still be going (quiet.go) is presumed until it can no longer be, and
// ends then.
func (r *Runner) lapse(ctx context.Context, term uint64, j *job, spec Spec, sched Schedule) {
	// The guard before r.mu, as step does. A release that comes as this
	// node stops leading is left to the next takeover, as at a node that
	// does not lead.
	leading := r.mayAct()
	now := time.Now()
	r.mu.Lock()
	defer r.unlock()
	if r.closed || ctx.Err() != nil {
		return
	}
	r.lapseLocked(term, j, spec, sched, now, leading)
}

// lapseLocked is lapse's rule at now; leading is the guard's answer.
func (c *core) lapseLocked(term uint64, j *job, spec Spec, sched Schedule, now time.Time, leading bool) {
	type ended struct {
		h      hold
		e      LedgerEntry
		manual bool
		// rerun: made due; else, if dueAt is set, not: a later start was
		// due already.
		rerun bool
		dueAt time.Time
	}
	var out []ended
	for _, id := range holdIDs(j) { // all that holdUntil waits for
		h, ok := c.holds[id]
		if !ok || now.Before(h.until) {
			continue
		}
		if !h.released && !h.presumed {
			if p, ok := c.presumedLocked(j, id, now); ok && oneRun(p.entry, h.entry) {
				c.holds[id] = p // unheard, but it may still be going
				continue
			}
		}
		delete(c.holds, id)
		if h.released {
			if !leading {
				continue
			}
			c.released[id] = h // a later word that it runs it is stale
		}
		if !c.stillRunning(id, h.entry) {
			continue // a later run started, or the outcome was heard
		}
		x := ended{h: h, e: c.interruptLocked(j, h.entry, h.from), manual: id != j.id}
		if _, over := tooLate(&spec, sched, x.e.Instant, now); !x.manual && spec.RerunInterrupted && !over {
			if j.pos.due.instant.IsZero() {
				j.pos.due, x.rerun = dueStart{instant: x.e.Instant, rerun: true}, true
			} else {
				x.dueAt = j.pos.due.instant
			}
		}
		out = append(out, x)
	}
	if len(out) > 0 {
		c.ledgerChanged()
	}
	for _, x := range out {
		why := "jobs: node running this job is no longer heard"
		switch {
		case x.h.released:
			why = "jobs: node running this job no longer runs it and sent no outcome"
		case x.h.presumed:
			why = "jobs: previous leader's run can no longer be going (stopped with its leadership, kill grace over)"
		}
		log := c.logs.With("job", spec.Name, "node", x.h.from, "scheduled_at", x.e.Instant, "started_term", x.e.Term,
			"term", term, "manual", x.manual)
		late := now.Sub(x.e.Instant)
		switch {
		case x.manual:
			log.Warn(why + "; manual run interrupted")
		case !spec.RerunInterrupted:
			log.Warn(why + "; run interrupted, not running it again")
		case x.rerun:
			log.Warn(why + "; run interrupted, running it again (rerun_interrupted)")
		case !x.dueAt.IsZero():
			log.Warn(why+"; run interrupted, not running it again: a later start is due", "due", x.dueAt)
		default:
			log.Warn(why+"; run interrupted, too late to run it again (misfire_grace)",
				append([]any{"late", late}, graceAttrs(&spec, sched, x.e.Instant)...)...)
		}
	}
}
