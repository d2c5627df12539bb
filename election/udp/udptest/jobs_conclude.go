package udptest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/jobs"
)

// What becomes of a run whose end no node reported: its node died with it
// (a crash, or a restart), so no outcome of it exists. The leader that
// takes the job over concludes it interrupted, once it can no longer be
// going, with a line that names it (its instant and started_term); with
// rerun_interrupted it runs the instant again, or says why not. In quorum
// mode (its entry was committed before it started, so every later leader
// knows it), checked after every event:
//
//   - concluded: such a run of the latest instant started, of which no
//     other run completed, reported its end or may still be going, is
//     concluded by some node's line before the scenario settles
//     (CheckJobConclusions);
//   - not while it may go: no node concludes a run interrupted while its
//     process may still be going;
//   - rerun owed (Jobs.Reruns): the first conclusion of a run that says
//     it runs the instant again is followed by the rerun's start, or by a
//     line that names the instant and skips it with a reason, before the
//     scenario settles. Off by default: a leader that woke from a stall
//     and can no longer act concludes a run and decides its rerun, hands
//     the rerun to the next leader ("the next leader decides it"), and the
//     next leader, whose ledger says interrupted, never reruns it nor
//     says so (TestQuorumStallAfterFireStorm seeds 7, 17, 41, 65, 67, 78,
//     83, 121, 158, 169);
//   - no rerun once its end is known: no node decides the rerun of an
//     instant whose newest entry in its own ledger has the outcome its
//     run's node reported (ok, failed, cancelled).

// runKey is one run: an instant index under the term it started in.
type runKey struct {
	k    int64
	term uint64
}

// conclusions is what the checks above track.
type conclusions struct {
	// latest is the latest instant index started (-1: none).
	latest int64
	// died are the runs owed a conclusion: their node died with them, by
	// when (sim time).
	died map[runKey]time.Time
	// concluded are the runs some node concluded.
	concluded map[runKey]bool
	// rerun are the instants a conclusion said it runs again, not started
	// or skipped with a reason yet, by when that was said (sim time).
	rerun map[int64]time.Time
}

func newConclusions() conclusions {
	return conclusions{latest: -1, died: map[runKey]time.Time{}, concluded: map[runKey]bool{}, rerun: map[int64]time.Time{}}
}

// checked reports whether the checks above apply: quorum mode, strict.
func (m *jobModel) checked(s *Sim) bool { return m.cfg.Strict && s.opts.Base.ClusterSize > 0 }

// runDied records that node's run st died with its process, at s.now.
func (m *jobModel) runDied(s *Sim, node string, st jobs.Start) {
	k := m.index(s, st.Instant)
	r := m.runs[k]
	if r == nil || r.completed || r.reported || k < m.concl.latest {
		return // it ended, or a later instant supersedes it
	}
	if slices.ContainsFunc(r.live, func(l liveRun) bool { return l.node != node && s.now.Before(l.goneBy()) }) {
		return // another run of the instant goes on
	}
	key := runKey{k, st.Term}
	if !m.concl.concluded[key] {
		m.concl.died[key] = s.now
	}
}

// started records a start of instant k: a rerun owed for it is done.
func (m *jobModel) started(k int64) {
	m.concl.latest = max(m.concl.latest, k)
	delete(m.concl.rerun, k)
}

// conclusion is what a log line says about the runs of the job.
type conclusion struct {
	// at is the instant it names (scheduled_at), term the run's
	// (started_term, 0: none).
	at   time.Time
	term uint64
	// interrupted: it concludes that run interrupted; rerun: and runs the
	// instant again.
	interrupted, rerun bool
	// pending: it decides nothing yet (a run still going, a start the
	// guard refused or handed to the next leader).
	pending bool
}

// pendingLines are (parts of) the lines that name an instant without
// deciding it.
var pendingLines = []string{
	"jobs: previous leader's run may still be going on its node; waiting",
	"jobs: previous leader's run still going on its node",
	"jobs: a run of this job is still going on another node",
	"jobs: not starting yet: this node cannot currently act as leader",
	"jobs: leadership ended before this instant could start",
	"this leadership decides it again",
	"the next leadership decides this instant",
}

// concludes reads l.
func concludes(l jobs.LogLine) conclusion {
	var c conclusion
	c.at, _ = attr[time.Time](l, "scheduled_at")
	c.term, _ = attr[uint64](l, "started_term")
	c.interrupted = c.term != 0 && strings.Contains(l.Msg, "interrupted")
	c.rerun = c.interrupted && strings.Contains(l.Msg, "running it again") && !strings.Contains(l.Msg, "not running it again")
	c.pending = slices.ContainsFunc(pendingLines, func(p string) bool { return strings.Contains(l.Msg, p) })
	return c
}

// heard checks and records log line l of node.
func (m *jobModel) heard(s *Sim, node string, l jobs.LogLine) {
	c := concludes(l)
	if c.pending {
		return
	}
	if !c.interrupted {
		first, n := m.named(s, l)
		for k := first; k < first+n; k++ {
			delete(m.concl.rerun, k) // a start of k skipped with a reason
		}
		return
	}
	k := m.index(s, c.at)
	key := runKey{k, c.term}
	first := !m.concl.concluded[key]
	m.concl.concluded[key] = true
	delete(m.concl.died, key)
	// A leader that woke late may conclude again a run another node
	// concluded or reran meanwhile: the first conclusion decides.
	if r := m.runs[k]; c.rerun && first && (r == nil || !slices.ContainsFunc(r.terms, func(t uint64) bool { return t != c.term })) {
		m.concl.rerun[k] = s.now
	}
	if !m.checked(s) {
		return
	}
	if r := m.runs[k]; r != nil && slices.ContainsFunc(r.live, func(l liveRun) bool { return l.term == c.term && s.now.Before(l.goneBy()) }) {
		s.fail("%s concluded the run of instant %d (term %x) interrupted while its process may still be going: %s", node, k, c.term, l.Msg)
	}
}

// checkRerun fails the run if node decided st, a rerun, while before
// that its own ledger's newest entry of the job was of the same instant
// with an outcome its run's node reported.
func (m *jobModel) checkRerun(s *Sim, node string, before jobs.LedgerEntry, st jobs.Start) {
	if st.Rerun && m.checked(s) && before.Instant.Equal(st.Instant) && reported(before.Outcome) {
		s.fail("%s decided the rerun of instant %d, whose run (term %x) it knew ended %v", node, m.index(s, st.Instant), before.Term, before.Outcome)
	}
}

// reported reports whether o is an outcome a run's own node reported.
func reported(o jobs.Outcome) bool {
	return o == jobs.OutcomeOK || o == jobs.OutcomeFailed || o == jobs.OutcomeCancelled
}

// entry returns c's newest ledger entry of the simulated job.
func entry(c *jobs.Core) jobs.LedgerEntry {
	l, _ := jobs.DecodeLedger(c.StateLedger())
	for _, e := range l.Entries {
		if e.JobID == jobs.JobIDOf(jobName) {
			return e
		}
	}
	return jobs.LedgerEntry{}
}

// CheckJobConclusions checks, in quorum mode, that every run whose node
// died with it before margin ago was concluded by some node, and that
// every rerun a conclusion owed before margin ago was started or skipped
// with a reason (jobs_conclude.go); call it once the cluster has settled.
func (s *Sim) CheckJobConclusions(margin time.Duration) error {
	m := s.jobs
	if m == nil || !m.checked(s) {
		return nil
	}
	by := s.now.Add(-margin)
	for _, key := range slices.SortedFunc(maps.Keys(m.concl.died), func(a, b runKey) int { return cmp.Compare(a.k, b.k) }) {
		if at := m.concl.died[key]; at.Before(by) {
			return fmt.Errorf("the run of instant %d (term %x), whose node died with it at %v, was never concluded", key.k, key.term, at.Sub(s.start))
		}
	}
	if !m.cfg.Reruns {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(m.concl.rerun)) {
		if at := m.concl.rerun[k]; at.Before(by) {
			return fmt.Errorf("instant %d, concluded interrupted at %v to be run again (rerun_interrupted), was neither rerun nor skipped with a reason", k, at.Sub(s.start))
		}
	}
	return nil
}

// ended records that st ended with an outcome its node reported.
func (m *jobModel) ended(s *Sim, st jobs.Start) {
	if r := m.runs[m.index(s, st.Instant)]; r != nil {
		r.reported = true
	}
}
