package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/proc"
)

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	// Jobs to run; validated by NewRunner (ValidateAll).
	Jobs []Spec
	// Services are the leader-only services to supervise (services.go);
	// validated by NewRunner (ValidateServices).
	Services []ServiceSpec
	// OnServiceExit is called when a service's copy exits while this node
	// leads (it is restarted after a delay), for hooks. It must return
	// promptly. Nil means none.
	OnServiceExit func(ServiceExit)
	// Node is this node's id, exported to runs as LANLEADER_NODE.
	Node string
	// Logger receives run events and every line of job output. Nil
	// discards.
	Logger *slog.Logger
	// KillGrace is the default time between SIGTERM and SIGKILL for jobs
	// without kill_grace. Zero means DefaultKillGrace.
	KillGrace time.Duration
	// OnRunFinished is called once per run (after its last attempt), for
	// metrics. It must return promptly. Nil means none.
	OnRunFinished func(RunRecord)
	// Environ is the base environment of every run. Nil means os.Environ()
	// at the time of the run.
	Environ []string
	// HistorySize is how many finished runs per job History keeps. Zero
	// means DefaultHistorySize.
	HistorySize int
}

// Runner runs jobs while this node leads. Create it with NewRunner, pass
// Callbacks() to the Elector, and call Wait after the Elector's Run returned.
type Runner struct {
	// core holds the job rules and what they decide from (core.go); the
	// Runner drives it under mu and carries out its effects (unlock).
	*core
	cfg     RunnerConfig
	cluster Cluster
	log     *slog.Logger
	// exec runs one attempt's process; tests replace it.
	exec func(ctx context.Context, s proc.Spec) proc.Result
	// bootNow reads the clock of licence deadlines (proc.BootNow; tests:
	// their fake clock, which their fake processes read too).
	bootNow func() time.Duration
	// httpTransport, if set, carries http: jobs' requests instead of one
	// built per attempt; tests set it.
	httpTransport http.RoundTripper
	// httpDial, if set, makes http: jobs' connections instead of
	// net.Dialer; tests set it.
	httpDial func(ctx context.Context, network, addr string) (net.Conn, error)

	// stop ends runs that outlive leadership (on_leader_loss: finish) when
	// Wait gives up.
	stopCtx context.Context
	stop    context.CancelFunc
	// drainCtx is cancelled by Drain: runs with on_leader_loss: cancel
	// stop, and no attempt or retry starts any more.
	drainCtx context.Context
	drain    context.CancelFunc
	// runs counts runs in progress (Add under mu while !draining).
	runs sync.WaitGroup

	mu     sync.Mutex
	wg     sync.WaitGroup // loops and runs; Add only under mu while !closed
	closed bool
	// leaderCtx is the current leadership's context (valid while term > 0),
	// for jobs a reload adds.
	leaderCtx context.Context
	leader    election.LeaderInfo // last known leader
	// services are the leader-only services (services.go), in config
	// order; removed, the ones a reload removed, by name, kept so that one
	// added back waits for its old copy to be gone.
	services []*service
	removed  map[string]*service
	// serviceGen numbers the services' supervisors of the leadership of
	// serviceGenTerm (serviceEntry): from 1 in each, so it stays small.
	serviceGen, serviceGenTerm uint64
}

// job is a Spec with its parsed schedule and live state (guarded by
// Runner.mu).
type job struct {
	spec  Spec
	sched Schedule
	id    uint64

	// While leading: runCtx is the context of the job's runs (a child of
	// the leadership's, cancelled when a reload removes the job) and
	// stopLoop ends the current scheduling loop, whose generation is gen.
	runCtx   context.Context
	stopRuns context.CancelFunc
	stopLoop context.CancelFunc
	gen      int
	// pos is where the job's schedule stands in the current leadership
	// (position.go).
	pos position

	// holdWake tells the scheduling loop a hold appeared (holds.go).
	holdWake chan struct{}

	active  int        // runs in progress, scheduled and manual
	next    time.Time  // the instant the loop waits for while leading, zero otherwise
	last    *RunRecord // most recent finished run
	skipped Counters

	// schedRuns are this process's scheduled runs in progress, as step
	// entered them in the ledger (runsScheduledLocked).
	schedRuns []LedgerEntry
}

// Counters count instants that were due but not started, by reason.
type Counters struct {
	// Overlap: a previous run was still going (overlap: skip).
	Overlap uint64 `json:"overlap"`
	// Refused: this node could not act as leader (Cluster.MayAct said no) until
	// the instant was overtaken by a later one, too late, or left to the
	// next leadership; or lanleader was stopping; or the run could not be
	// recorded in the cluster (Cluster.Commit), or the guard said no right
	// before its process would have started.
	Refused uint64 `json:"refused"`
	// Misfired: fell due while no node could run it and the misfire
	// policy (or misfire_grace) said skip.
	Misfired uint64 `json:"misfired"`
	// AlreadyStarted: a previous leader had already started it.
	AlreadyStarted uint64 `json:"already_started"`
}

// NewRunner validates cfg.Jobs and cfg.Services and returns a Runner, run
// under cluster, that is idle until its Callbacks report leadership.
func NewRunner(cluster Cluster, cfg RunnerConfig) (*Runner, error) {
	if cluster == nil {
		return nil, errors.New("jobs: NewRunner needs a Cluster (Alone for a mode that coordinates nothing)")
	}
	if err := ValidateAll(cfg.Jobs); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if err := ValidateServices(cfg.Services, cfg.Jobs); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Runner{
		core:    newCore(cfg.Node, cfg.KillGrace, cluster.Timing(), cfg.HistorySize),
		cfg:     cfg,
		cluster: cluster,
		log:     log,
		removed: map[string]*service{},
		exec:    proc.Run,
		bootNow: proc.BootNow,
	}
	r.stopCtx, r.stop = context.WithCancel(context.Background())
	r.drainCtx, r.drain = context.WithCancel(context.Background())
	jobs, err := newJobs(cfg.Jobs)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		r.byID[j.id] = j
	}
	r.jobs = jobs
	for _, spec := range cfg.Services {
		r.services = append(r.services, newService(spec))
	}
	return r, nil
}

// newJobs parses the schedules of specs (validated) and checks that their
// ledger ids differ.
func newJobs(specs []Spec) ([]*job, error) {
	byID := map[uint64]*job{}
	var out []*job
	for _, s := range specs {
		sched, err := ParseSchedule(s.Schedule)
		if err != nil { // cannot happen after ValidateAll
			return nil, fmt.Errorf("jobs: %s: schedule: %w", s.Name, err)
		}
		j := &job{spec: s, sched: sched, id: JobIDOf(s.Name), holdWake: make(chan struct{}, 1)}
		if other, dup := byID[j.id]; dup {
			return nil, fmt.Errorf("jobs: job names %q and %q have the same ledger id; rename one", other.spec.Name, s.Name)
		}
		byID[j.id] = j
		out = append(out, j)
	}
	for _, j := range out {
		if other, dup := byID[ManualJobIDOf(j.spec.Name)]; dup {
			return nil, fmt.Errorf("jobs: job %q has the ledger id of %q's manual runs; rename one", other.spec.Name, j.spec.Name)
		}
	}
	return out, nil
}

// Callbacks returns the callbacks to give the Elector (combined with others
// via election.Combine). OnStartedLeading starts scheduling under the
// leadership's term; the leadership context's cancellation stops it and,
// per on_leader_loss, the running jobs.
func (r *Runner) Callbacks() election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: r.startLeading,
		OnStoppedLeading: func() {
			r.mu.Lock()
			r.stopLeadingLocked()
			r.unlock()
		},
		OnNewLeader: func(l election.LeaderInfo) {
			r.mu.Lock()
			r.leader = l
			if l.Known() {
				r.rememberLeader(l.Term, l.ID)
			}
			r.unlock()
		},
	}
}

// maxLeaders bounds Runner.leaders.
const maxLeaders = 64

// rememberLeader notes that id led term. Must hold r.mu.
func (c *core) rememberLeader(term uint64, id string) {
	if _, ok := c.leaders[term]; !ok && len(c.leaders) >= maxLeaders {
		oldest := term
		for t := range c.leaders {
			oldest = min(oldest, t)
		}
		delete(c.leaders, oldest)
	}
	c.leaders[term] = id
}

// jobByLedgerID returns the job a ledger entry is about, and whether the
// entry is of its manual runs. Must hold r.mu.
func (c *core) jobByLedgerID(id uint64) (*job, bool) {
	if j := c.byID[id]; j != nil {
		return j, false
	}
	for _, j := range c.jobs {
		if ManualJobIDOf(j.spec.Name) == id {
			return j, true
		}
	}
	return nil, false
}

// History returns the runs this Runner keeps: its own finished runs and
// those heard of in leaders' ledgers. Snapshot and Restore it to keep
// history across restarts.
func (r *Runner) History() *History { return r.history }

// Drain ends this node's runs before it leaves the election, so that a
// graceful stop never leaves a run going while a successor starts the next
// one: no run or retry starts any more; runs with on_leader_loss: cancel
// are stopped (SIGTERM to the process group, SIGKILL after kill_grace);
// runs with finish are waited for until ctx ends, then stopped the same
// way. It returns once no run is going, with ctx.Err() if finish runs had
// to be stopped. Keep the Elector running meanwhile: a leader goes on
// heartbeating (with the ledger showing the runs' ends), so no other node
// takes over before the runs are gone. Then stop the Elector and call Wait.
func (r *Runner) Drain(ctx context.Context) error {
	r.mu.Lock()
	r.draining = true
	active := 0
	for _, j := range r.jobs {
		active += j.active
	}
	r.unlock()
	if active > 0 {
		r.log.Info("jobs: stopping: ending runs before leaving the election", "runs", active)
	}
	r.drain()
	return r.waitOrStop(ctx, &r.runs)
}

// Wait blocks until every scheduling loop and run has ended. Call it after
// the Elector's Run has returned (so leadership has ended and cancel-policy
// runs are being stopped). Runs with on_leader_loss: finish are waited for
// until ctx ends; then they are cancelled too (SIGTERM, SIGKILL after the
// kill grace) and Wait returns ctx.Err() once they are gone.
func (r *Runner) Wait(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.unlock()
	return r.waitOrStop(ctx, &r.wg)
}

// waitOrStop waits for wg; if ctx ends first, it stops the runs that
// outlive leadership (r.stop), waits for wg all the same and returns
// ctx.Err().
func (r *Runner) waitOrStop(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		r.stop()
		<-done
		return ctx.Err()
	}
}

// runStartedLocked counts a run of j as started. Must hold r.mu.
func (c *core) runStartedLocked(j *job) {
	j.active++
	c.workStartedLocked()
}

// workStartedLocked counts a run, or a service's copy, as started: this
// node holds work (Cluster.SetHolding). runEndedLocked counts it ended. Must hold
// r.mu.
func (c *core) workStartedLocked() {
	c.running++
	if c.running == 1 {
		c.emit(effect{kind: effectHolding, holding: true})
	}
}

// runEndedLocked counts a run as ended, once j.active and the ledger show
// it. Must hold r.mu.
func (c *core) runEndedLocked() {
	c.running--
	if c.running == 0 {
		c.emit(effect{kind: effectHolding, holding: false})
	}
}

// environ returns the base environment for a run.
func (r *Runner) environ() []string {
	if r.cfg.Environ != nil {
		return r.cfg.Environ
	}
	return os.Environ()
}

// sleepCtx waits d unless ctx ends first; it reports whether d passed (a
// retry's delay, a service's restart delay).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// unlock carries out the effects its core decided while r.mu was held, in
// order, and releases r.mu: every section under the lock ends here, so no
// effect waits for a later one. Publish and SetHolding are called with the
// lock held, as Cluster says.
func (r *Runner) unlock() {
	for _, e := range r.takeEffects() {
		switch e.kind {
		case effectLog:
			e.line.Write(r.log)
		case effectPublish:
			r.cluster.Publish()
		case effectHolding:
			r.cluster.SetHolding(e.holding)
		case effectWake:
			wake(e.job)
		case effectHeard:
			r.wakeServicesLocked()
		}
	}
	r.mu.Unlock()
}
