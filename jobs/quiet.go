package jobs

import (
	"math"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/proc"
)

// A run a previous leader started may still be going after this node took
// over: the leader may have been cut off rather than dead, and stops its
// runs only when it stops acting (on_leader_loss: cancel sends SIGTERM,
// then SIGKILL after kill_grace), or lets them go on (finish). The rule,
// in every mode and for job runs and service copies alike: this node,
// leading, never starts a run of a job (a copy of a service) while a
// previous leader's may still be going. Such a run counts as going until
// its holder says how it ended or that it no longer runs it (holds.go), or
// until it can no longer be going (quietAt): the previous leader stopped
// acting by this leadership's start plus the mode's overhang
// (election.Succession), and the run was gone within its stop bound after
// that. The stop bound travels with the run, in its ledger entry
// (LedgerEntry.Stop, StopBound): the one its leader computed from the spec
// it ran, so a rolling config change never shortens the wait. Meanwhile
// the job's overlap policy applies to it as to a run of this node's own,
// and it is neither concluded interrupted nor run again; at that point
// (lapse) it is. A run this node's previous process started died with
// that process. Where nothing bounds the run (a mode without
// coordination, or finish without a timeout) it is concluded at the
// takeover, or when its hold lapses: the documented limits of those modes
// and of finish.

// StopBound is how long after its leader stops acting a run (or a
// service's copy) can still be going, by that leader's clock, or that
// nothing bounds it. The zero StopBound is not carried: an entry from a
// node of an earlier version, whose successor falls back on its own
// config.
type StopBound struct {
	d                time.Duration
	bounded, carried bool
}

// stopWithin is a stop bound of d.
func stopWithin(d time.Duration) StopBound { return StopBound{d: d, bounded: true, carried: true} }

// stopUnbounded says that nothing bounds the run.
var stopUnbounded = StopBound{carried: true}

// Bound returns the bound; ok is false when nothing bounds the run or no
// bound is carried.
func (s StopBound) Bound() (d time.Duration, ok bool) { return s.d, s.bounded }

// Carried reports whether the bound was set by the run's leader.
func (s StopBound) Carried() bool { return s.carried }

// maxStopWire is the largest stop bound on the wire (StopBound.wire).
const maxStopWire = math.MaxInt64/uint64(time.Millisecond) + 1

// wire is s as a ledger carries it: 0 unbounded, else milliseconds
// (rounded up, so a successor never waits less) plus one.
func (s StopBound) wire() uint64 {
	if !s.bounded {
		return 0
	}
	return uint64((max(s.d, 0)+time.Millisecond-1)/time.Millisecond) + 1
}

// stopFromWire is the StopBound a ledger's value v carries (v <=
// maxStopWire).
func stopFromWire(v uint64) StopBound {
	if v == 0 {
		return stopUnbounded
	}
	return stopWithin(time.Duration(v-1) * time.Millisecond)
}

// quietAt is the succession rule for work a previous leader left running,
// a job's run or a service's copy: when it can no longer be going, for a
// leadership that started at since in a mode that promises s. mine is set
// when this node's previous process started it: it died with that
// process, and is gone a kill's settling time after this leadership
// started, in every mode (counted a fifth longer: the kernel settles it in
// real time, and this host's clock may run that much fast, the drift the
// protocol allows). Otherwise its leader stopped acting by since
// plus the mode's overhang, and the work was gone within stop after that
// (by that leader's clock: Succession.QuietAt counts it longer). ok is
// false when nothing bounds it: the mode bounds no deposed leader, or the
// work has no stop bound.
func quietAt(s election.Succession, since time.Time, mine bool, stop StopBound) (quiet time.Time, ok bool) {
	if mine {
		return since.Add(election.OtherClock(proc.KillSettle)), true
	}
	d, bounded := stop.Bound()
	if !bounded {
		return time.Time{}, false
	}
	return s.QuietAt(since, d)
}

// stopOf returns the stop bound e carries: a service entry's, from its
// instant (serviceEntry); a run's, from Stop, or, for an entry from a
// node of an earlier version, which carries none, fallback.
func stopOf(e LedgerEntry, fallback StopBound) StopBound {
	switch {
	case isServiceEntry(e):
		return stopWithin(serviceStopOf(e))
	case e.Stop.Carried():
		return e.Stop
	}
	return fallback
}

// keepStop returns e, which replaces cur, with cur's stop bound if both
// are one run and e carries none (a relay by a node of an earlier
// version): the bound is the run's, whoever passes the entry on.
func keepStop(cur, e LedgerEntry) LedgerEntry {
	if !e.Stop.Carried() && oneRun(cur, e) {
		e.Stop = cur.Stop
	}
	return e
}

// killGrace is the time between SIGTERM and SIGKILL for a run of spec.
func (c *core) killGrace(spec *Spec) time.Duration {
	if spec.KillGrace > 0 {
		return spec.KillGrace
	}
	return c.defaultKillGrace
}

// runStop returns how long after its leader stops acting a run of spec
// can still be going, the bound its ledger entry carries: with
// on_leader_loss: cancel, its licence (a process's, licence.go) and then
// its attempt's stop time (a process's kill grace and settling,
// executor.stopTime); with finish, the attempt's timeout and then its
// stop time (no retry starts once leadership is lost), and nothing bounds
// it without a timeout. The old leader's host times it: a
// successor counts it longer (election.Succession.QuietAt).
func (c *core) runStop(spec *Spec) StopBound {
	ex := executorKind(spec)
	stop := ex.stopTime(c.killGrace(spec))
	switch {
	case spec.OnLeaderLoss == LeaderLossCancel && ex.licensed():
		return stopWithin(Licence + stop)
	case spec.OnLeaderLoss == LeaderLossCancel:
		return stopWithin(stop)
	case spec.Timeout > 0:
		return stopWithin(spec.Timeout + stop)
	}
	return stopUnbounded
}

// runningEntry is the ledger entry of a run of spec (under ledger id) of
// instant, started now under term: running, with its stop bound.
func (c *core) runningEntry(id uint64, instant time.Time, term uint64, spec *Spec) LedgerEntry {
	return LedgerEntry{JobID: id, Instant: instant, Outcome: OutcomeRunning, Term: term, Stop: c.runStop(spec)}
}

// quietLocked returns when e, a running entry of j (of its scheduled or
// manual runs) that node started as leader and that this process does not
// run, can no longer be going, for the current leadership (quietAt);
// false when nothing bounds it. Must hold r.mu.
func (c *core) quietLocked(j *job, e LedgerEntry, node string) (time.Time, bool) {
	return quietAt(c.timing.Succession, c.leadStart, node == c.node, stopOf(e, c.runStop(&j.spec)))
}

// presumedLocked returns as a hold (presumed: no word from its node) the
// run of j a previous leader left running under ledger id, if it may still
// be going at now while this node leads and its holder has not said it no
// longer runs it. Must hold r.mu.
func (c *core) presumedLocked(j *job, id uint64, now time.Time) (hold, bool) {
	if c.term == 0 {
		return hold{}, false
	}
	e, ok := c.newestByID(id)
	if !ok || e.Outcome != OutcomeRunning || c.runsLocked(j, e) {
		return hold{}, false
	}
	node := c.leaderOfLocked(e.Term)
	if h, ok := c.holds[id]; ok && oneRun(h.entry, e) {
		if h.released {
			return hold{}, false // its holder said it no longer runs it
		}
		node = h.from
	}
	quiet, ok := c.quietLocked(j, e, node)
	if !ok || !now.Before(quiet) {
		return hold{}, false
	}
	return hold{from: node, entry: e, until: quiet, presumed: true}, true
}

// runsLocked reports whether this process runs the run of j (scheduled or
// manual, by e's ledger id) that e names. Must hold r.mu.
func (c *core) runsLocked(j *job, e LedgerEntry) bool {
	if e.JobID == j.id {
		return c.runsScheduledLocked(j, e)
	}
	return c.runsManualLocked(j, e)
}
