package udptest

import (
	"fmt"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/udpjobs"
	"github.com/lanleader/lanleader/internal/proc"
	"github.com/lanleader/lanleader/jobs"
)

// The job runner's own rules (jobs.Core, the core jobs.Runner drives) on
// every simulated node, for the invariants the runner builds on the
// protocol. Each node runs one job, "@every Jobs.Every", through a
// simulated driver that does what the Runner does around the same core:
//
//   - leadership: StartLeading with the term the protocol's status shows,
//     StopLeading when it no longer leads; its runs (on_leader_loss:
//     cancel) end cancelled at once, their processes counting as going
//     for the whole stop time (SIGTERM to the end of SIGKILL's settling,
//     as a process that ignores SIGTERM would); with Jobs.StopSlowly they
//     end then, and the node holds them meanwhile (SetHolding), as a
//     deposed Runner does;
//   - the ledger: the core's Ledger is the node's payload (Publish while
//     leading, SetPayload otherwise), every payload heard is handed to
//     Hear with its sender and FlagHolding, SetHolding follows the core's
//     Holding; the StateLedger survives crashes, as the state file does;
//   - time: Tick after every event, at the node's own clock, with the
//     guard's answer (CanActAsLeader);
//   - the gate: a start waits until the protocol says the payload version
//     carrying its entry is Committed; then the guard is asked again
//     (CanActAsLeader, and the leadership it was decided in must still be
//     the node's), as the Runner asks right before exec; a start refused
//     there is NotStarted. A run lasts Jobs.RunFor, then Ended ok.
//
// Invariants, after every event: no instant is started twice (Strict):
// a start that is not a rerun is an instant's only one, and a rerun
// (rerun_interrupted) starts only an instant none of whose runs completed
// and none of which may still be going (a run's process goes on for
// RunFor whatever its node does, until a crash or its cancellation kills
// it); no start is decided while the node may not act, nor later than
// misfire_grace after its instant (a rerun aside: it was decided within
// it). And at the end of a run that ended healed (CheckJobLosses), every
// instant due since the first leadership was started or skipped with a
// logged reason: a line naming it (scheduled_at), or a range (from, or
// scheduled_at as the latest, and count). In quorum mode, besides: a run
// whose node died with it is concluded, and never while its process may
// still be going; no rerun is decided once its run's end is known
// (jobs_conclude.go); no line of a node that may act calls an instant
// some node started missed (jobs_missed.go).

// Jobs configures the job runner on the simulated nodes (Options.Jobs).
type Jobs struct {
	// Every is the job's period, rounded up to whole seconds (@every);
	// zero means 1 s.
	Every time.Duration
	// Gather is the new leader's gathering window
	// (jobs.ClusterTiming.Gather); Legacy ignores it.
	Gather time.Duration
	// Legacy runs the rules as the runner before gathering did: no window,
	// and only leaders' payloads (heartbeat, answer, resign) are heard.
	Legacy bool
	// Strict makes a duplicate start an invariant violation (quorum mode:
	// always; otherwise only where the run was clean).
	Strict bool
	// Rerun sets the job's rerun_interrupted.
	Rerun bool
	// RunFor is how long a run lasts (zero: it ends as it starts).
	RunFor time.Duration
	// StopSlowly makes a deposed leader's runs end only when their stop
	// time is over, held by their node meanwhile, rather than be told
	// ended at once.
	StopSlowly bool
	// Reruns makes CheckJobConclusions check that every rerun a
	// conclusion owed was made or skipped with a reason
	// (jobs_conclude.go).
	Reruns bool
	// Break, if set, is called with each node's spec before its core is
	// built: a test's deliberate misconfiguration.
	Break func(*jobs.Spec)
}

// JobStats are the job runner's figures.
type JobStats struct {
	// Starts counts runs started (past the gate and the guard);
	// Duplicates, starts of an instant already started elsewhere (or
	// before); Reruns, second starts of interrupted instants.
	Starts, Duplicates, Reruns int
	// NotStarted counts starts the gate or the guard refused.
	NotStarted int
	// Failovers counts leaderships after the first.
	Failovers int
}

// jobName is the simulated job's name.
const jobName = "tick"

// jobNode is one node's driver of its core.
type jobNode struct {
	core  *jobs.Core
	inc   uint64
	state []byte // StateLedger: survives crashes
	set   []byte // payload last handed to this life's Node
	// term is the leadership the core was told of (0: not leading).
	term    uint64
	pending []gated
	running []running
}

// gated is a start waiting for its entry to be committed.
type gated struct {
	start jobs.Start
	ver   uint64
}

// running is a run in progress until end.
type running struct {
	start jobs.Start
	end   time.Time // node time
	// cancelled: told to stop before it ended by itself.
	cancelled bool
}

// jobModel is the Sim's job runner state.
type jobModel struct {
	cfg    Jobs
	spec   jobs.Spec
	timing jobs.ClusterTiming
	nodes  map[string]*jobNode
	// starts: instant index → node that started it first; runs: what
	// became of its runs.
	starts map[int64]string
	runs   map[int64]*instantRuns
	stats  JobStats
	leads  int
	// lastStart is when the latest run started (sim time).
	lastStart time.Time
	// accounted are the instants some node decided: started, or named
	// by a log line; firstLead is when a node first led (sim time).
	accounted map[int64]bool
	firstLead time.Time
	// coldFrom is the latest instant a cold start took the schedule up
	// at: nobody knew of a run of the job, so nothing before was owed.
	coldFrom time.Time
	// concl tracks the runs whose end no node reported (jobs_conclude.go).
	concl conclusions
	// rerunRefused are the instants a rerun of which the gate or the
	// guard refused (jobs_missed.go).
	rerunRefused map[int64]bool
}

// instantRuns is what became of one instant's runs.
type instantRuns struct {
	completed bool
	// reported: a run ended with an outcome its node reported (ok, or
	// cancelled at its step-down).
	reported bool
	// terms are the terms its runs started under.
	terms []uint64
	// live are the runs that may still be going: their node and when
	// their process ends by itself (sim time).
	live []liveRun
}

type liveRun struct {
	node string
	term uint64
	end  time.Time
	// licence is when its shim has killed it unless its node renewed its
	// licence (jobs.Licence) meanwhile (sim time).
	licence time.Time
}

// goneBy returns when l's process has ended: by itself, stopped, or
// killed by its shim when its licence ran out.
func (l liveRun) goneBy() time.Time {
	if l.licence.Before(l.end) {
		return l.licence
	}
	return l.end
}

// liveAt drops the runs of r that ended by now and reports whether any
// may still be going.
func (r *instantRuns) liveAt(now time.Time) bool {
	r.live = slices.DeleteFunc(r.live, func(l liveRun) bool { return !now.Before(l.goneBy()) })
	return len(r.live) > 0
}

// killed reports whether node's run under term was killed by its shim
// before it could end by itself.
func (r *instantRuns) killed(node string, term uint64) bool {
	return slices.ContainsFunc(r.live, func(l liveRun) bool { return l.node == node && l.term == term && l.licence.Before(l.end) })
}

// licensed returns when the shim of a run started, or renewed, at now
// by sn (node time) kills it unless renewed again (sim time): a cancel
// job's process is gone within Licence, its kill grace and
// LicenceKillSettle after its node last saw it may act.
func (m *jobModel) licensed(s *Sim, sn *simNode, now time.Time) time.Time {
	return s.toSim(sn, now.Add(jobs.Licence+m.spec.KillGrace+proc.LicenceKillSettle))
}

// renew renews the licences of sn's runs at now (node time), while it
// may act.
func (m *jobModel) renew(s *Sim, sn *simNode, jn *jobNode, now time.Time) {
	lic := m.licensed(s, sn, now)
	for _, r := range jn.running {
		if ir := m.runs[m.index(s, r.start.Instant)]; ir != nil {
			for i, l := range ir.live {
				if l.node == sn.id && l.term == r.start.Term && l.licence.Before(lic) {
					ir.live[i].licence = lic
				}
			}
		}
	}
}

// stopped records that node's runs of instant k end by end (sim time): a
// crash's die with the process, within proc.KillSettle; a cancelled one
// goes on for the whole stop time.
func (m *jobModel) stopped(node string, k int64, end time.Time) {
	if r := m.runs[k]; r != nil {
		for i, l := range r.live {
			if l.node == node && end.Before(l.end) {
				r.live[i].end = end
			}
		}
	}
}

func newJobModel(cfg Jobs, base protocol.Config) *jobModel {
	cfg.Every = max(time.Second, (cfg.Every + time.Second - 1).Truncate(time.Second))
	spec := jobs.Spec{Name: jobName, Schedule: "@every " + cfg.Every.String(), Command: []string{"true"},
		RerunInterrupted: cfg.Rerun, KillGrace: time.Second, MisfireGrace: misfireGrace(cfg)}
	if cfg.Break != nil {
		cfg.Break(&spec)
	}
	gather := cfg.Gather
	if cfg.Legacy {
		gather = 0
	}
	return &jobModel{
		cfg: cfg, spec: spec, nodes: map[string]*jobNode{}, starts: map[int64]string{}, runs: map[int64]*instantRuns{}, accounted: map[int64]bool{},
		concl: newConclusions(), rerunRefused: map[int64]bool{},
		timing: jobs.ClusterTiming{Gather: gather, HoldLapse: base.Timings().Hold, Succession: udp.SuccessionFor(base.ClusterSize)},
	}
}

// misfireGrace is the job's misfire_grace: a period and half the gathering
// window, so that a misfire run, decided a window after its takeover
// and up to a period after its instant, falls on both sides of it.
func misfireGrace(cfg Jobs) time.Duration { return cfg.Every + cfg.Gather/2 }

// JobStats returns the job runner's figures (zero without Options.Jobs).
func (s *Sim) JobStats() JobStats {
	if s.jobs == nil {
		return JobStats{}
	}
	return s.jobs.stats
}

// index is the instant index of t (instants at multiples of Every since
// the sim's start, itself a multiple of every whole-second period up to 5 s).
func (m *jobModel) index(s *Sim, t time.Time) int64 { return int64(t.Sub(s.start) / m.cfg.Every) }

// step drives every node's core after an event.
func (m *jobModel) step(s *Sim) {
	for _, id := range s.ids {
		sn := s.nodes[id]
		jn := m.nodes[id]
		if jn == nil {
			jn = &jobNode{}
			m.nodes[id] = jn
		}
		if !sn.up || jn.core != nil && jn.inc != sn.inc {
			m.died(s, id, jn)
		}
		if !sn.up {
			continue
		}
		if sn.paused {
			continue // stalled: nothing runs, nothing is forgotten
		}
		if jn.core == nil {
			m.boot(s, sn, jn)
		}
		m.drive(s, sn, jn)
		for _, e := range sn.n.Ready() {
			s.send(sn.id, e)
		}
	}
}

// died forgets a process life that ended (a crash, or a restart the
// driver had not seen the crash of): its runs died with it.
func (m *jobModel) died(s *Sim, id string, jn *jobNode) {
	for _, r := range jn.running {
		m.stopped(id, m.index(s, r.start.Instant), s.now.Add(proc.KillSettle))
		m.runDied(s, id, r.start)
	}
	jn.core, jn.term, jn.pending, jn.running = nil, 0, nil, nil
}

// boot builds a new process life's core from the node's state.
func (m *jobModel) boot(s *Sim, sn *simNode, jn *jobNode) {
	c, err := jobs.NewCore(sn.id, []jobs.Spec{m.spec}, m.timing)
	if err != nil {
		s.fail("%s: job core: %v", sn.id, err)
		return
	}
	if jn.state != nil {
		if err := c.Restore(jn.state); err != nil {
			s.fail("%s: restore the job ledger: %v", sn.id, err)
		}
	}
	jn.core, jn.inc, jn.set, jn.term, jn.pending, jn.running = c, sn.inc, nil, 0, nil, nil
}

// drive hands the core what happened and carries out what it decides.
func (m *jobModel) drive(s *Sim, sn *simNode, jn *jobNode) {
	now := s.nodeNow(sn)
	c := jn.core
	for _, h := range sn.n.Payloads() {
		if m.cfg.Legacy && h.Type != protocol.Heartbeat && h.Type != protocol.Resign && h.Type != protocol.Answer {
			continue
		}
		if err := c.Hear(now, h.From, udpjobs.HoldWordOf(h), h.Payload); err != nil {
			s.fail("%s: ledger from %s: %v", sn.id, h.From, err)
		}
	}
	st := sn.n.Status()
	leading := st.Role == election.Leader
	if jn.term != 0 && (!leading || st.Leader.Term != jn.term) {
		m.stopLeading(s, sn, jn)
	}
	if leading && jn.term == 0 {
		if m.leads == 0 {
			m.firstLead = s.now
		}
		m.leads++
		if m.leads > 1 {
			m.stats.Failovers++
		}
		jn.term = st.Leader.Term
		c.StartLeading(now, jn.term)
	}
	mayAct := sn.n.CanActAsLeader(now)
	if mayAct {
		m.renew(s, sn, jn, now)
	}
	before := entry(c)
	starts := c.Tick(now, mayAct)
	if len(starts) > 0 && !mayAct {
		s.fail("%s: the job core started instant %v while this node may not act as leader", sn.id, starts[0].Instant)
	}
	for _, st := range starts {
		m.accounted[m.index(s, st.Instant)] = true
		m.checkRerun(s, sn.id, before, st)
		if late := now.Sub(st.Instant); !st.Rerun && late >= m.spec.MisfireGrace {
			s.fail("%s: the job core started instant %d %v late, misfire_grace %v", sn.id, m.index(s, st.Instant), late, m.spec.MisfireGrace)
		}
	}
	m.apply(s, sn, jn)
	for _, st := range starts {
		jn.pending = append(jn.pending, gated{start: st, ver: sn.n.PayloadVersion()})
		s.logf("%s job decides instant %d (term %x, rerun %v)", sn.id, m.index(s, st.Instant), st.Term, st.Rerun)
	}
	m.settle(s, sn, jn, now)
	for range 8 { // what an ended run changed
		if !m.apply(s, sn, jn) {
			break
		}
	}
	jn.state = c.StateLedger()
}

// stopLeading tells the core this node no longer leads: its runs
// (on_leader_loss: cancel) end cancelled, its gated starts do not start.
func (m *jobModel) stopLeading(s *Sim, sn *simNode, jn *jobNode) {
	for _, g := range jn.pending {
		m.stats.NotStarted++
		m.notStarted(s, g.start)
		jn.core.NotStarted(g.start, "the leadership it was decided in ended")
	}
	now := s.nodeNow(sn)
	for i, r := range jn.running {
		if stop := now.Add(m.spec.KillGrace + proc.KillSettle); stop.Before(r.end) {
			jn.running[i].end, jn.running[i].cancelled = stop, true
			m.stopped(sn.id, m.index(s, r.start.Instant), s.toSim(sn, stop))
		}
		if !m.cfg.StopSlowly {
			m.ended(s, r.start)
			jn.core.Ended(r.start, jobs.OutcomeCancelled)
		}
	}
	if !m.cfg.StopSlowly {
		jn.running = nil
	}
	jn.pending = nil
	jn.core.StopLeading()
	jn.term = 0
}

// apply carries out the core's Ready: the ledger to the node's payload,
// holding; it reports whether there was anything.
func (m *jobModel) apply(s *Sim, sn *simNode, jn *jobNode) bool {
	rd := jn.core.Ready()
	now := s.nodeNow(sn)
	if p := jn.core.Ledger(); rd.Published || !slices.Equal(p, jn.set) {
		jn.set = p
		if jn.term != 0 {
			sn.n.Publish(now, p)
		} else {
			sn.n.SetPayload(p)
		}
	}
	for _, h := range rd.Holding {
		sn.n.SetHolding(now, h)
	}
	for _, l := range rd.Logs {
		s.logf("%s %s %v", sn.id, l.Msg, l.Attrs)
		m.account(s, l)
		m.heard(s, sn.id, l)
		m.checkMissed(s, sn, l)
	}
	return rd.Published || len(rd.Holding) > 0 || len(rd.Logs) > 0
}

// settle starts the gated starts whose entry is committed, asking the
// guard again right before (the Runner's check before exec), and ends the
// runs whose time is up.
func (m *jobModel) settle(s *Sim, sn *simNode, jn *jobNode, now time.Time) {
	keep := jn.pending[:0]
	for _, g := range jn.pending {
		switch {
		case !sn.n.Committed(now, g.ver):
			keep = append(keep, g)
		case g.start.Term != jn.term || !sn.n.CanActAsLeader(now):
			m.stats.NotStarted++
			m.notStarted(s, g.start)
			jn.core.NotStarted(g.start, "this node cannot currently act as leader")
		default:
			m.start(s, sn, g.start, s.toSim(sn, now.Add(m.cfg.RunFor)))
			jn.running = append(jn.running, running{start: g.start, end: now.Add(m.cfg.RunFor)})
		}
	}
	jn.pending = keep
	left := jn.running[:0]
	for _, r := range jn.running {
		if now.Before(r.end) {
			left = append(left, r)
			continue
		}
		m.ended(s, r.start)
		if r.cancelled {
			jn.core.Ended(r.start, jobs.OutcomeCancelled)
			continue
		}
		if ir := m.runs[m.index(s, r.start.Instant)]; ir != nil && !ir.killed(sn.id, r.start.Term) {
			ir.completed = true
		}
		jn.core.Ended(r.start, jobs.OutcomeOK)
	}
	jn.running = left
}

// start records st, started by sn, its process going until end (sim
// time), and checks that no instant starts twice.
func (m *jobModel) start(s *Sim, sn *simNode, st jobs.Start, end time.Time) {
	id, k := sn.id, m.index(s, st.Instant)
	m.started(k)
	m.stats.Starts++
	m.lastStart = s.now
	if st.Rerun {
		m.stats.Reruns++
	}
	r := m.runs[k]
	if r == nil {
		r = &instantRuns{}
		m.runs[k] = r
	}
	prev, started := m.starts[k]
	if !started {
		m.starts[k] = id
	}
	switch live := r.liveAt(s.now); {
	case started && !st.Rerun, r.completed, live:
		m.stats.Duplicates++
		s.logf("DUPLICATE: instant %d started by %s and %s (rerun %v, completed %v, still going %v)", k, prev, id, st.Rerun, r.completed, live)
		// Without quorum, as for exclusion (invariants.go), a node still
		// reading what queued during a stall does not know yet that it
		// was succeeded.
		if m.cfg.Strict && (s.opts.Base.ClusterSize > 0 || !s.inv.dirty && len(sn.waking) == 0) {
			s.fail("instant %d started twice: by %s and by %s", k, prev, id)
		}
	default:
		s.logf("%s job starts instant %d (rerun %v)", id, k, st.Rerun)
	}
	r.live = append(r.live, liveRun{node: id, term: st.Term, end: end, licence: m.licensed(s, sn, s.nodeNow(sn))})
	r.terms = append(r.terms, st.Term)
}

// account marks the instants log line l names.
func (m *jobModel) account(s *Sim, l jobs.LogLine) {
	if t, ok := attr[time.Time](l, "schedule_from"); ok && t.After(m.coldFrom) {
		m.coldFrom = t
	}
	first, n := m.named(s, l)
	for k := first; k < first+n; k++ {
		m.accounted[k] = true
	}
}

// named returns the instants log line l names: scheduled_at, or a range
// (from, or scheduled_at as the latest, and count); n is 0 if none.
func (m *jobModel) named(s *Sim, l jobs.LogLine) (first, n int64) {
	at, _ := attr[time.Time](l, "scheduled_at")
	from, _ := attr[time.Time](l, "from")
	count, ok := attr[int](l, "count")
	if !ok {
		count = 1
	}
	switch {
	case !from.IsZero():
		return m.index(s, from), int64(count)
	case at.IsZero():
		return 0, 0
	}
	return m.index(s, at) - int64(count) + 1, int64(count)
}

// attr returns the value of l's attribute key, if it is a T.
func attr[T any](l jobs.LogLine, key string) (T, bool) {
	for i := 0; i+1 < len(l.Attrs); i += 2 {
		if k, _ := l.Attrs[i].(string); k == key {
			v, ok := l.Attrs[i+1].(T)
			return v, ok
		}
	}
	var zero T
	return zero, false
}

// CheckJobsRun checks that a run started at since or later: once a
// cluster has settled, its leader runs the job again.
func (s *Sim) CheckJobsRun(since time.Time) error {
	if m := s.jobs; m != nil && m.lastStart.Before(since) {
		return fmt.Errorf("the job has not run since %v (settled), last at %v", since.Sub(s.start), m.lastStart.Sub(s.start))
	}
	return nil
}

// CheckJobLosses checks that every instant due from the first leadership
// until margin before now was started or skipped with a logged reason
// (jobs.go); call it once the cluster has settled after its faults.
func (s *Sim) CheckJobLosses(margin time.Duration) error {
	m := s.jobs
	if m == nil || m.leads == 0 {
		return nil
	}
	for k := m.index(s, m.firstLead) + 2; k <= m.index(s, s.now.Add(-margin)); k++ {
		if !m.accounted[k] && s.start.Add(time.Duration(k)*m.cfg.Every).After(m.coldFrom) {
			return fmt.Errorf("instant %d (%v) was neither started nor skipped with a logged reason",
				k, s.start.Add(time.Duration(k)*m.cfg.Every))
		}
	}
	return nil
}

// add adds o's figures to j's.
func (j *JobStats) add(o JobStats) {
	j.Starts += o.Starts
	j.Duplicates += o.Duplicates
	j.Reruns += o.Reruns
	j.NotStarted += o.NotStarted
	j.Failovers += o.Failovers
}

// String summarizes the figures.
func (j JobStats) String() string {
	return fmt.Sprintf("%d starts (%d reruns), %d duplicates, %d not started at the gate, %d failovers",
		j.Starts, j.Reruns, j.Duplicates, j.NotStarted, j.Failovers)
}
