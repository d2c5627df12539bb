package jobs

import (
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
	defer r.mu.Unlock()
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

// Ledger returns this node's encoded ledger (at most MaxLedgerSize bytes):
// per job, the last instant started, its outcome and term. The leader
// piggybacks it on heartbeats. It never blocks on the Runner's lock, so
// OnLedgerChange may call it.
func (r *Runner) Ledger() []byte {
	if p := r.published.Load(); p != nil {
		return *p
	}
	return Ledger{}.Encode()
}

// AdoptLedger stores a ledger received from the leader (followers call it
// on every heartbeat; the newest replaces the previous one). It is used
// when this node next becomes leader. A malformed ledger is rejected with an
// error and the previous one kept.
func (r *Runner) AdoptLedger(b []byte) error {
	l, err := DecodeLedger(b)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.peer = &l
	r.mu.Unlock()
	return nil
}

// encodeLocked encodes the own ledger. Must hold r.mu.
func (r *Runner) encodeLocked() []byte {
	l := Ledger{Entries: make([]LedgerEntry, 0, len(r.own))}
	for _, e := range r.own {
		l.Entries = append(l.Entries, e)
	}
	return l.Encode()
}
