package jobs

import (
	"bytes"
	"time"
)

// JobStatus is one job's state for the /status page.
type JobStatus struct {
	// Name is the job's name.
	Name string `json:"name"`
	// Schedule is the schedule as written.
	Schedule string `json:"schedule"`
	// NextRun is the next scheduled instant (while leading, the one the
	// loop waits for; otherwise the schedule's next instant from now).
	NextRun time.Time `json:"next_run"`
	// Running is the number of runs in progress.
	Running int `json:"running"`
	// LastRun is the most recent finished run on this node, nil if none.
	LastRun *RunRecord `json:"last_run,omitempty"`
	// Ledger is the newest ledger entry this node knows for the job (its
	// own or the leader's), nil if none.
	Ledger *LedgerEntry `json:"ledger,omitempty"`
	// Skipped counts instants not started, by reason.
	Skipped Counters `json:"skipped"`
}

// Snapshot returns every job's status, in config order. Safe to call from
// any goroutine.
func (r *Runner) Snapshot() []JobStatus {
	now := time.Now()
	r.mu.Lock()
	defer r.unlock()
	out := make([]JobStatus, 0, len(r.jobs))
	for _, j := range r.jobs {
		s := JobStatus{
			Name: j.spec.Name, Schedule: j.spec.Schedule, NextRun: j.next,
			Running: j.active, Skipped: j.skipped,
		}
		if s.NextRun.IsZero() {
			s.NextRun = j.sched.Next(now)
		}
		if j.last != nil {
			rec := *j.last
			s.LastRun = &rec
		}
		if e, ok := r.knownEntry(j); ok {
			s.Ledger = &e
		}
		out = append(out, s)
	}
	return out
}

// Ledger returns this node's ledger as it tells it to peers, encoded (at
// most MaxLedgerSize bytes): per job, the newest instant known started (by
// this node or by the leaders it heard), its outcome and term; the runs
// this process runs are marked held (LedgerEntry.Held). The leader
// piggybacks it on heartbeats; followers hand it to a new leader (claims,
// votes, Ledger messages), so what one node heard reaches the next leader.
// The state file keeps StateLedger instead. It never blocks on the
// Runner's lock, so Cluster.Publish may call it.
func (r *Runner) Ledger() []byte { return r.wireLedger() }

// wireLedger is the ledger as this node tells it (Ledger).
func (c *core) wireLedger() []byte {
	if p := c.published.Load(); p != nil {
		return p.wire
	}
	return Ledger{}.Encode()
}

// StateLedger returns, encoded like Ledger, what this node knows, for its
// state file: the same entries, the runs this node started (in this
// process or, as RestoreLedger said, a previous one) marked held, so that
// the next process, which runs none of them, knows who led their terms.
// Peers get Ledger. Like Ledger it never blocks on the Runner's lock.
func (r *Runner) StateLedger() []byte { return r.stateLedger() }

// stateLedger is the ledger as this node keeps it (StateLedger).
func (c *core) stateLedger() []byte {
	if p := c.published.Load(); p != nil {
		return p.state
	}
	return Ledger{}.Encode()
}

// AdoptLedger merges a ledger received from another node into what this
// node knows (for every heartbeat, claim, vote and Ledger handover heard,
// directly or through Run); if that changes what it knows, the ledger it
// publishes changes too (Cluster.Publish).
// Per job the later entry wins (later instant, then higher term; for the
// same instant and term the run's end over running, and an outcome heard
// over interrupted: a stale relay never takes a run back). Merging
// rather than replacing keeps what two leaders of a split did. A job missing
// from a truncated ledger becomes unknown until a later ledger names it: a
// takeover starts it cold, but what this node heard of it before is kept,
// so no instant it names starts again. It is used when this node next
// becomes leader. A malformed ledger is
// rejected with an error and changes nothing.
func (r *Runner) AdoptLedger(b []byte) error { return r.withLedger(b, r.adoptLocked) }

// RestoreLedger takes up, at start, the ledger this node's state file kept
// (StateLedger): like AdoptLedger, and the runs it marks held were started
// by this node, so it led their terms (leaderOfLocked). Only this node's
// own state file may be given here; a ledger heard from a peer goes to
// AdoptLedger or AdoptLedgerFrom.
func (r *Runner) RestoreLedger(b []byte) error { return r.withLedger(b, r.restoreLocked) }

// withLedger decodes b and, if it is a ledger, hands it to take under
// r.mu.
func (r *Runner) withLedger(b []byte, take func(Ledger)) error {
	l, err := DecodeLedger(b)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.unlock()
	take(l)
	return nil
}

// restoreLocked is RestoreLedger's rule for l.
func (c *core) restoreLocked(l Ledger) {
	for _, e := range l.Entries {
		if e.Held {
			c.rememberLeader(e.Term, c.node)
		}
	}
	c.adoptLocked(l)
}

// adoptLocked merges l (AdoptLedger). Must hold r.mu.
func (c *core) adoptLocked(l Ledger) {
	named := make(map[uint64]bool, len(l.Entries))
	c.hearRuns(l.Entries)
	// changed: what the ledger is encoded from may have changed (== on
	// entries errs only towards true: equal entries are equal).
	changed := false
	for _, e := range l.Entries {
		named[e.JobID] = true
		c.inheritLocked(e)
		if c.unknown[e.JobID] {
			delete(c.unknown, e.JobID)
			changed = true
		}
		e.Held = false // its sender's word about itself (holdLocked)
		if cur, ok := c.peer[e.JobID]; !ok || !newer(cur, e) {
			e = keepStop(cur, e)
			changed = changed || !ok || cur != e
			c.peer[e.JobID] = e
		}
	}
	if l.Truncated {
		// Left out to fit: what its sender knows of these jobs is unknown.
		// What this node heard before stays: it is still true, and step
		// must never start again an instant it names.
		for _, j := range c.jobs {
			if !named[j.id] && !c.unknown[j.id] {
				c.unknown[j.id] = true
				changed = true
			}
		}
	}
	if p := c.published.Load(); p == nil || changed && !p.equal(c.encodeBothLocked()) {
		c.ledgerChanged()
	}
	c.emit(effect{kind: effectHeard})
}

// publishedLedger is the ledger as published at its last change: how this
// node tells it (wire, Ledger: held runs marked) and what it keeps (state,
// StateLedger).
type publishedLedger struct {
	wire, state []byte
}

func (p *publishedLedger) equal(q *publishedLedger) bool {
	return bytes.Equal(p.wire, q.wire) && bytes.Equal(p.state, q.state)
}

// encodeBothLocked encodes the ledger in both forms. Must hold r.mu.
func (c *core) encodeBothLocked() *publishedLedger {
	return &publishedLedger{wire: c.encodeLocked(c.runsEntryLocked), state: c.encodeLocked(c.startedLocked)}
}

// encodeLocked encodes what this node knows: per configured job its known
// entry (knownEntry), plus the newest entry of every other id (manual
// runs, jobs only other nodes run), so a node with another job list still
// passes them on, each as this node knows it, marked held if held says
// so (LedgerEntry.Held: runsEntryLocked for peers, startedLocked for the state
// file). A job a truncated ledger left out is left out again (the result
// is marked truncated). Must hold r.mu.
func (c *core) encodeLocked(held func(LedgerEntry) bool) []byte {
	as := func(e LedgerEntry) LedgerEntry {
		e.Held = held(e)
		return e
	}
	l := Ledger{Entries: make([]LedgerEntry, 0, len(c.own)+len(c.peer))}
	for _, j := range c.jobs {
		if e, ok := c.knownEntry(j); ok {
			l.Entries = append(l.Entries, as(e))
		} else if c.unknown[j.id] {
			l.Truncated = true
		}
	}
	// Other ids (manual runs' entries, jobs this node does not run): the
	// newer of own and heard.
	for id, e := range c.own {
		if p, ok := c.peer[id]; c.byID[id] == nil && (!ok || !newer(p, e)) {
			l.Entries = append(l.Entries, as(e))
		}
	}
	for id, e := range c.peer {
		if o, ok := c.own[id]; c.byID[id] == nil && (!ok || newer(e, o)) {
			l.Entries = append(l.Entries, as(e))
		}
	}
	return l.Encode()
}

// startedLocked reports whether this node started the run e names, not
// yet ended as far as it knows: it led its term. Must hold r.mu.
func (c *core) startedLocked(e LedgerEntry) bool {
	return e.Outcome == OutcomeRunning && c.leaderOfLocked(e.Term) == c.node
}

// runsEntryLocked reports whether this process runs the run e names, a
// running entry of one of its jobs (runsLocked), or of a job a reload
// removed while the run went on (core.gone): which runs a node holds is
// what it runs, whatever its config says now. Must hold r.mu.
func (c *core) runsEntryLocked(e LedgerEntry) bool {
	j, _ := c.jobByLedgerID(e.JobID)
	if j == nil {
		j = c.goneByLedgerID(e.JobID)
	}
	return j != nil && e.Outcome == OutcomeRunning && c.runsLocked(j, e)
}

// hearRuns files the finished runs a leader's ledger tells of in the
// history, so every node's history shows the cluster's runs, not only its
// own. Must hold r.mu.
func (c *core) hearRuns(entries []LedgerEntry) {
	for _, e := range entries {
		if !e.Outcome.final() {
			continue
		}
		j, manual := c.jobByLedgerID(e.JobID)
		if j == nil {
			continue
		}
		c.history.Add(RunRecord{
			Job: j.spec.Name, ScheduledAt: e.Instant, Term: e.Term, Outcome: e.Outcome,
			Node: c.leaderOfLocked(e.Term), Manual: manual, Heard: true, ExitCode: -1,
		})
	}
}
