package jobs

import (
	"time"

	"github.com/lanleader/lanleader/internal/proc"
)

// A run a previous leader started may still be going after this node took
// over: the leader may have been cut off rather than dead, and stops its
// runs only when it stops acting (on_leader_loss: cancel sends SIGTERM,
// then SIGKILL after kill_grace), or lets them go on (finish). The rule,
// in every mode: this node, leading, never starts a run of a job while a
// previous leader's run of it may still be going. Such a run counts as
// going until its holder says how it ended or that it no longer runs it
// (holds.go), or until it can no longer be going (quietLocked): the
// previous leader stopped acting by this leadership's start plus the
// mode's overhang (election.Succession), and the run was gone within its
// stop time (stopBound) after that. Meanwhile the job's overlap policy
// applies to it as to a run of this node's own, and it is neither
// concluded interrupted nor run again; at that point (lapse) it is. A run
// this node's previous process started died with that process. Where
// nothing bounds the run (a mode without coordination, or finish without
// a timeout) it is concluded at the takeover, or when its hold lapses, as
// before: the documented limits of those modes and of finish.

// killGrace is the time between SIGTERM and SIGKILL for a run of spec.
func (c *core) killGrace(spec *Spec) time.Duration {
	if spec.KillGrace > 0 {
		return spec.KillGrace
	}
	return c.defaultKillGrace
}

// stopBound returns how long after its leader stops acting a run of spec
// can still be going: with on_leader_loss: cancel, its attempt's stop time
// (a process's kill grace and settling, executor.stopTime); with finish,
// the attempt's timeout and then its stop time (no retry starts once
// leadership is lost), and nothing bounds it without a timeout. The old
// leader's host times it: a successor counts it longer
// (election.Succession.QuietAt).
func (c *core) stopBound(spec *Spec) (time.Duration, bool) {
	stop := executorKind(spec).stopTime(c.killGrace(spec))
	switch {
	case spec.OnLeaderLoss == LeaderLossCancel:
		return stop, true
	case spec.Timeout > 0:
		return spec.Timeout + stop, true
	}
	return 0, false
}

// quietLocked returns when a run of j that node started as leader, and
// that this process does not run, can no longer be going, for the current
// leadership; false when nothing bounds it. A run of this node's previous
// process died with it, before this leadership started. Must hold r.mu.
func (c *core) quietLocked(j *job, node string) (time.Time, bool) {
	if node == c.node {
		return c.leadStart.Add(proc.KillSettle), true
	}
	stop, ok := c.stopBound(&j.spec)
	if !ok {
		return time.Time{}, false
	}
	return c.timing.Succession.QuietAt(c.leadStart, stop)
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
	quiet, ok := c.quietLocked(j, node)
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
