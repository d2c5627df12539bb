package jobs

import (
	"fmt"
	"time"
)

// Core is the job rules of one node driven by events, without a Runner:
// no clock, goroutine, process or log of its own. Every method is an
// event at now; what the rules decide comes out of Ready. It is the very
// core the Runner drives (core.go) — the Runner with timers, processes
// and a Cluster, a Core's caller with whatever it simulates: the
// simulator (election/udp/udptest) runs one on every node, with the
// protocol's Committed as the gate and CanActAsLeader as the guard.
//
// A driver, for each event: hands the Core what happened (StartLeading,
// StopLeading, Hear, Tick with the guard's answer, Ended or NotStarted for
// a run it was given), then takes Ready: it publishes the ledger when
// Published says so (before it starts anything), passes Holding on, runs
// each Start once the gate says its entry is committed and the guard
// still says yes, and writes the log lines.
type Core struct {
	c *core
	// retry is, per job, when a start the guard refused is asked about
	// again: set once per refusal, as the Runner's loop sets its timer.
	retry map[*job]retryAt
}

type retryAt struct {
	instant, at time.Time
}

// Start is a run the rules decided: run it (after the gate and the guard),
// then tell the Core how it ended (Ended), or that it did not start
// (NotStarted).
type Start struct {
	// Job is the job's name; Instant its scheduled instant (UTC); Term
	// the leadership it was decided in.
	Job     string
	Instant time.Time
	Term    uint64
	// Rerun marks the second run of an instant interrupted elsewhere.
	Rerun bool

	j   *job
	rec RunRecord
}

// Ready is what the rules decided since the last Ready.
type Ready struct {
	// Published is set when the ledger changed (Ledger): publish it
	// before starting anything.
	Published bool
	// Holding, if not empty, are this node's changes of "runs going here"
	// (Cluster.SetHolding), in order.
	Holding []bool
	// Logs are the lines to write, in order.
	Logs []LogLine
}

// NewCore returns the job rules of node for specs (validated like
// NewRunner's), under an election with timing.
func NewCore(node string, specs []Spec, timing ClusterTiming) (*Core, error) {
	if err := ValidateAll(specs); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	js, err := newJobs(specs)
	if err != nil {
		return nil, err
	}
	c := newCore(node, DefaultKillGrace, timing, 0)
	for _, j := range js {
		c.byID[j.id] = j
	}
	c.jobs = js
	return &Core{c: c, retry: map[*job]retryAt{}}, nil
}

// Restore takes up what a previous process of this node kept
// (StateLedger), as Runner.RestoreLedger does.
func (k *Core) Restore(state []byte) error {
	l, err := DecodeLedger(state)
	if err != nil {
		return err
	}
	k.c.restoreLocked(l)
	return nil
}

// StartLeading: this node leads term from now.
func (k *Core) StartLeading(now time.Time, term uint64) {
	k.c.startLeadingLocked(term, now)
	k.c.ledgerChanged()
}

// StopLeading: this node no longer leads. A start still owed is handed
// over to the next leadership.
func (k *Core) StopLeading() {
	for _, j := range k.c.jobs {
		if j.pos.term == k.c.term {
			k.c.handOverDueLocked(j)
		}
	}
	k.c.stopLeadingLocked()
}

// Hear: a ledger from node from was heard at now, in a message whose word
// on from's runs is word (Runner.AdoptLedgerFrom).
func (k *Core) Hear(now time.Time, from string, word HoldWord, ledger []byte) error {
	l, err := DecodeLedger(ledger)
	if err != nil {
		return err
	}
	k.c.hearLocked(from, word, l, now)
	return nil
}

// Tick lets every job's scheduling loop do what is due at now, mayAct the
// guard's answer (Cluster.MayAct): the takeover decision at the end of the
// gathering window, holds that lapsed, and the starts due, as the
// Runner's loops do when their timers fire.
func (k *Core) Tick(now time.Time, mayAct bool) []Start {
	c := k.c
	var out []Start
	if c.term == 0 || c.draining {
		return nil
	}
	for _, j := range c.jobs {
		if j.pos.term != c.term {
			continue
		}
		def := loopDef{spec: j.spec, sched: j.sched, gen: j.gen}
		if !j.pos.decided && !now.Before(c.gatherUntil) {
			c.decideLocked(j, c.term, now)
		}
		gathering := !j.pos.decided
		if !gathering {
			c.lapseLocked(c.term, j, j.spec, j.sched, now, mayAct)
		}
		for range maxTickSteps {
			wake, ok := c.nextWakeLocked(j, def, now, gathering)
			if d := j.pos.due; d.refused {
				if r, set := k.retry[j]; set && r.instant.Equal(d.instant) {
					wake = r.at
				} else {
					k.retry[j] = retryAt{instant: d.instant, at: wake}
				}
			}
			if !ok || wake.IsZero() || wake.After(now) {
				break
			}
			delete(k.retry, j)
			rec, rerun, start := c.stepLocked(j, def, c.term, now, mayAct)
			if start {
				out = append(out, Start{Job: j.spec.Name, Instant: rec.ScheduledAt, Term: rec.Term, Rerun: rerun, j: j, rec: rec})
			}
		}
	}
	return out
}

// maxTickSteps bounds the starts one job decides in one Tick: each step
// decides one start (or refuses one, which waits guardRetry).
const maxTickSteps = 64

// Ended: the run s ended at now with outcome.
func (k *Core) Ended(s Start, outcome Outcome) {
	rec := s.rec
	rec.Outcome, rec.Attempt = outcome, 1
	k.c.finishLocked(s.j, rec)
}

// NotStarted: the run s did not start, why (the guard said no before its
// first attempt), as the Runner's run does: a scheduled run's instant is
// owed again (refused.go); a manual run counts refused and ends cancelled.
func (k *Core) NotStarted(s Start, why string) {
	rec := s.rec
	if !rec.Manual {
		k.c.oweRefusedLocked(s.j, rec.ScheduledAt, rec.Term, k.c.term == rec.Term, why)
		return
	}
	s.j.skipped.Refused++
	rec.Outcome, rec.Error = OutcomeCancelled, "not started: "+why
	k.c.logs.Warn("jobs: not starting: "+why, "job", s.Job, "scheduled_at", rec.ScheduledAt, "term", rec.Term)
	k.c.finishLocked(s.j, rec)
}

// Ledger returns the ledger as this node tells it (Runner.Ledger).
func (k *Core) Ledger() []byte { return k.c.wireLedger() }

// StateLedger returns the ledger as this node keeps it (Runner.StateLedger).
func (k *Core) StateLedger() []byte { return k.c.stateLedger() }

// Ready returns what the rules decided since the last call, besides the
// starts Tick returns, and forgets it.
func (k *Core) Ready() Ready {
	var rd Ready
	for _, e := range k.c.takeEffects() {
		switch e.kind {
		case effectLog:
			rd.Logs = append(rd.Logs, e.line)
		case effectPublish:
			rd.Published = true
		case effectHolding:
			rd.Holding = append(rd.Holding, e.holding)
		}
	}
	return rd
}

// Counters returns the named job's counters of instants not started.
func (k *Core) Counters(name string) Counters {
	for _, j := range k.c.jobs {
		if j.spec.Name == name {
			return j.skipped
		}
	}
	return Counters{}
}
