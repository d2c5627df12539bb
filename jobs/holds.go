package jobs

import (
	"context"
	"time"
)

// Runs held elsewhere.
//
// A leader that loses leadership without stopping (a lost election, a
// healed partition, a preemption) lets its on_leader_loss: finish runs
// complete. While any run of this node is going it holds
// (RunnerConfig.OnHolding); the elector then marks what it sends as a
// follower, and sends its ledger on every heartbeat of its leader and once
// more when the last run ends (udp: FlagHolding). Every node records, per
// job, the running entry a holder says it runs (AdoptLedgerFrom): a hold,
// renewed by every such message for HoldLapse. A new leader does not
// count a held run as interrupted, and its overlap policy applies to it as
// to a run of its own. A hold ends when its holder's ledger says the run
// ended, when a message of the holder without the mark says it runs
// nothing, or when it lapses unrenewed (the holder died or is cut off):
// the leader then treats the run as interrupted (interruptedAt).

// hold is a run another node said it still runs.
type hold struct {
	// from is the holder.
	from string
	// entry is the running entry it announced.
	entry LedgerEntry
	// until is when the hold lapses unless renewed.
	until time.Time
}

// AdoptLedgerFrom adopts a ledger heard from node from, like AdoptLedger,
// and records what it says about from's own runs: with holding set (the
// sender, not leading, still runs jobs), each running entry of a term from
// led is a run going on from, held for RunnerConfig.HoldLapse; without it,
// from runs nothing, and its holds end. Entries of terms other nodes led
// (a relayed pool) never make a hold (RunnerConfig.LedBy says who led a
// term).
func (r *Runner) AdoptLedgerFrom(from string, holding bool, b []byte) error {
	l, err := DecodeLedger(b)
	if err != nil {
		return err
	}
	now := time.Now()
	r.mu.Lock()
	r.adoptLocked(l)
	if from != "" && from != r.cfg.Node {
		r.holdLocked(from, holding, l.Entries, now)
	}
	r.mu.Unlock()
	return nil
}

// holdLocked renews or ends from's holds per its ledger. Must hold r.mu.
func (r *Runner) holdLocked(from string, holding bool, entries []LedgerEntry, now time.Time) {
	renewed := map[uint64]bool{}
	if holding {
		for _, e := range entries {
			if e.Outcome != OutcomeRunning || !r.ledBy(from, e.Term) {
				continue
			}
			j, manual := r.jobByLedgerID(e.JobID)
			if j == nil {
				continue
			}
			if _, had := r.holds[e.JobID]; !had {
				r.log.Info("jobs: a run of this job is still going on another node", "job", j.spec.Name,
					"node", from, "scheduled_at", e.Instant, "started_term", e.Term, "manual", manual)
				select {
				case j.holdWake <- struct{}{}:
				default:
				}
			}
			r.holds[e.JobID] = hold{from: from, entry: e, until: now.Add(r.cfg.HoldLapse)}
			renewed[e.JobID] = true
		}
	}
	for id, h := range r.holds {
		if h.from == from && !renewed[id] {
			delete(r.holds, id) // ended; its outcome, if named, is adopted
		}
	}
}

// ledBy reports whether node led term (RunnerConfig.LedBy). Must hold
// r.mu.
func (r *Runner) ledBy(node string, term uint64) bool {
	if r.cfg.LedBy != nil {
		return r.cfg.LedBy(term, node)
	}
	return r.leaders[term] == node
}

// heldLocked returns a live hold at now on a run of j, scheduled or manual
// (overlap applies across both), if any. Must hold r.mu.
func (r *Runner) heldLocked(j *job, now time.Time) (hold, bool) {
	for _, id := range []uint64{j.id, ManualJobIDOf(j.spec.Name)} {
		if h, ok := r.holds[id]; ok && now.Before(h.until) {
			return h, true
		}
	}
	return hold{}, false
}

// holdUntil returns when the hold on j's scheduled run lapses (zero if
// none). A manual run's hold just lapses: it is never run again.
func (r *Runner) holdUntil(j *job) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.holds[j.id].until
}

// lapse handles the end of j's hold without word from its holder, while
// this node leads (after the takeover decision): the run is treated as
// interrupted at that point, and run again if the job has
// rerun_interrupted and the instant is still within misfire_grace.
func (r *Runner) lapse(ctx context.Context, term uint64, j *job, spec Spec) {
	now := time.Now()
	r.mu.Lock()
	h, ok := r.holds[j.id]
	if !ok || now.Before(h.until) || r.closed || ctx.Err() != nil {
		r.mu.Unlock()
		return
	}
	delete(r.holds, j.id)
	e, known := r.newestEntry(j)
	if !known || !e.Instant.Equal(h.entry.Instant) || e.Term != h.entry.Term || e.Outcome != OutcomeRunning {
		r.mu.Unlock()
		return // a later run started, or the outcome was heard
	}
	e.Outcome = OutcomeInterrupted
	r.setOwn(j, e)
	r.ledgerChanged()
	r.mu.Unlock()
	log := r.log.With("job", spec.Name, "node", h.from, "scheduled_at", e.Instant, "started_term", e.Term, "term", term)
	late := now.Sub(e.Instant)
	switch {
	case !spec.RerunInterrupted:
		log.Warn("jobs: node running this job is no longer heard; run interrupted, not running it again")
	case late >= graceOf(&spec):
		log.Warn("jobs: node running this job is no longer heard; run interrupted, too late to run it again (misfire_grace)",
			"late", late, "misfire_grace", graceOf(&spec))
	default:
		log.Warn("jobs: node running this job is no longer heard; run interrupted, running it again (rerun_interrupted)")
		r.fire(ctx, term, j, spec, e.Instant, true)
	}
}
