package hooks

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/proc"
)

// Which transitions fire which hook (each exactly once, in the order the
// transitions happened):
//
//   - on_leader: every time this node starts leading (OnStartedLeading),
//     including a new term while leading (the Elector reports a stop and a
//     start; only on_leader runs, with the new term, since the role did not
//     change).
//   - on_follower: every time this node stops leading, with the new leader
//     (LANLEADER_LEADER_ID, empty if none is known yet) taken from the
//     OnNewLeader that follows; and once at startup, when a node that has
//     not led yet first learns that another node leads. A follower seeing
//     the leader change from one peer to another runs nothing: its role
//     did not change.
//   - on_stop: once, when Stop is called (the process is stopping), after
//     every earlier hook.
//
// Environment: lanleader's own plus LANLEADER_HOOK (on_leader, on_follower,
// on_stop), LANLEADER_ROLE (leader, follower, stopped), LANLEADER_TERM,
// LANLEADER_LEADER_ID and LANLEADER_NODE.

// Hook names, as in the config file and LANLEADER_HOOK.
const (
	OnLeader   = "on_leader"
	OnFollower = "on_follower"
	OnStop     = "on_stop"
	// OnFailure is a job's own failure hook (jobs[].on_failure).
	OnFailure = "on_failure"
	// OnJobFailure is the failure hook for every job.
	OnJobFailure = "on_job_failure"
	// OnServiceExit runs when a service's copy exits while this node
	// leads (it is restarted after a delay).
	OnServiceExit = "on_service_exit"
)

// JobFailure describes a job run that failed for good, for the failure
// hooks' environment.
type JobFailure struct {
	Job         string    // LANLEADER_JOB
	RunID       string    // LANLEADER_RUN_ID
	ScheduledAt time.Time // LANLEADER_SCHEDULED_AT
	Term        uint64    // LANLEADER_TERM
	ExitCode    int       // LANLEADER_EXIT_CODE; -1: killed or did not start
	Attempt     int       // LANLEADER_ATTEMPT: attempts made
	Error       string    // LANLEADER_ERROR
	Output      []string  // LANLEADER_OUTPUT: the last lines, newline-separated
}

// JobFailed queues the job's own on_failure hook, then on_job_failure, on
// the hooks queue (in order with the role hooks, each with the timeout).
// It returns at once.
func (h *Hooks) JobFailed(f JobFailure) {
	env := []string{
		"LANLEADER_JOB=" + f.Job,
		"LANLEADER_RUN_ID=" + f.RunID,
		"LANLEADER_SCHEDULED_AT=" + f.ScheduledAt.UTC().Format(time.RFC3339),
		"LANLEADER_EXIT_CODE=" + strconv.Itoa(f.ExitCode),
		"LANLEADER_ATTEMPT=" + strconv.Itoa(f.Attempt),
		"LANLEADER_ERROR=" + f.Error,
		"LANLEADER_OUTPUT=" + strings.Join(f.Output, "\n"),
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	for _, hk := range []struct {
		name string
		cmd  Command
	}{{OnFailure, h.cfg.JobOnFailure[f.Job]}, {OnJobFailure, h.cfg.OnJobFailure}} {
		if !hk.cmd.IsZero() {
			h.pushLocked(event{hook: hk.name, cmd: hk.cmd, role: h.role, term: f.Term, leader: h.leader, env: env})
		}
	}
}

// ServiceExit describes a service's copy that exited while its node led,
// for on_service_exit's environment.
type ServiceExit struct {
	Service  string   // LANLEADER_SERVICE
	Term     uint64   // LANLEADER_TERM
	ExitCode int      // LANLEADER_EXIT_CODE; -1: killed by a signal or did not start
	Error    string   // LANLEADER_ERROR: how it ended ("exit 3", "signal killed")
	Restarts uint64   // LANLEADER_RESTARTS: exits of its copies on this node so far
	Output   []string // LANLEADER_OUTPUT: its last lines, newline-separated
}

// ServiceExited queues on_service_exit on the hooks queue. It returns at
// once.
func (h *Hooks) ServiceExited(e ServiceExit) {
	env := []string{
		"LANLEADER_SERVICE=" + e.Service,
		"LANLEADER_EXIT_CODE=" + strconv.Itoa(e.ExitCode),
		"LANLEADER_ERROR=" + e.Error,
		"LANLEADER_RESTARTS=" + strconv.FormatUint(e.Restarts, 10),
		"LANLEADER_OUTPUT=" + strings.Join(e.Output, "\n"),
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped || h.cfg.OnServiceExit.IsZero() {
		return
	}
	h.pushLocked(event{hook: OnServiceExit, cmd: h.cfg.OnServiceExit, role: h.role, term: e.Term, leader: h.leader, env: env})
}

// Hooks runs the notify hooks for one node. Create it with New, give
// Callbacks() to the Elector (via election.Combine), and call Stop when the
// Elector's Run has returned.
type Hooks struct {
	cfg Config // guarded by mu: SetConfig replaces it
	// node, environ and onResult are cfg's, fixed at New.
	node     string
	environ  []string
	onResult func(hook, result string)
	log      *slog.Logger
	// run executes one hook; tests may replace it.
	run func(ctx context.Context, s proc.Spec) proc.Result

	kill     context.Context // ends a running hook when Stop gives up
	killHook context.CancelFunc
	wake     chan struct{}
	done     chan struct{}

	mu      sync.Mutex
	queue   []event
	stopped bool
	// Role tracking, to decide which transition fires what.
	role    string // "", "leader", "follower"
	term    uint64
	leader  string
	pending bool // stopped leading; on_follower waits for the next leader
}

// event is one hook to run.
type event struct {
	hook    string
	cmd     Command
	role    string
	term    uint64
	leader  string
	timeout time.Duration
	// env are further variables (a job failure's).
	env []string
}

// New returns Hooks for cfg and starts its queue goroutine. logger nil
// discards.
func New(cfg Config, logger *slog.Logger) *Hooks {
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Hooks{cfg: cfg, node: cfg.Node, environ: cfg.Environ, onResult: cfg.OnResult, log: logger, run: proc.Run,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	h.kill, h.killHook = context.WithCancel(context.Background())
	go h.worker()
	return h
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// SetConfig replaces the hook commands and timeout (a config reload); Node
// and Environ are kept. Hooks already queued run with the commands they were
// queued with; the role tracking carries on, so no transition is lost or
// repeated.
func (h *Hooks) SetConfig(cfg Config) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cfg.Node, cfg.Environ, cfg.OnResult = h.cfg.Node, h.cfg.Environ, h.cfg.OnResult
	h.cfg = cfg.withDefaults()
}

// Callbacks returns the callbacks to combine into the Elector's. They only
// queue hooks and return at once.
func (h *Hooks) Callbacks() election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: func(_ context.Context, term uint64) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.flushPendingLocked()
			h.role, h.term, h.leader = "leader", term, h.cfg.Node
			h.enqueueLocked(OnLeader, h.cfg.OnLeader)
		},
		OnStoppedLeading: func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.role, h.leader, h.pending = "follower", "", true
		},
		OnNewLeader: func(l election.LeaderInfo) {
			h.mu.Lock()
			defer h.mu.Unlock()
			if l.Term > h.term {
				h.term = l.Term
			}
			switch {
			case h.pending && l.ID == h.cfg.Node && l.ID != "":
				// A new term of our own leadership (stop + start): the
				// role never changed, so only on_leader runs, with the
				// new term.
				h.pending = false
			case h.pending:
				h.leader = l.ID
				h.flushPendingLocked()
			case h.role == "" && l.Known() && l.ID != h.cfg.Node:
				h.role, h.leader = "follower", l.ID
				h.enqueueLocked(OnFollower, h.cfg.OnFollower)
			default:
				if h.role == "follower" {
					h.leader = l.ID
				}
			}
		},
	}
}

// flushPendingLocked queues the on_follower of a leadership that ended.
func (h *Hooks) flushPendingLocked() {
	if h.pending {
		h.pending = false
		h.enqueueLocked(OnFollower, h.cfg.OnFollower)
	}
}

func (h *Hooks) enqueueLocked(hook string, cmd Command) {
	role := h.role
	if hook == OnStop {
		role = "stopped"
	}
	if cmd.IsZero() || h.stopped {
		return
	}
	h.pushLocked(event{hook: hook, cmd: cmd, role: role, term: h.term, leader: h.leader})
}

// pushLocked queues ev with the current timeout and wakes the worker.
func (h *Hooks) pushLocked(ev event) {
	if len(h.queue) >= MaxQueued {
		h.log.Error("hooks: queue full; hook dropped", "hook", ev.hook, "term", ev.term)
		return
	}
	ev.timeout = h.cfg.Timeout
	h.queue = append(h.queue, ev)
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Stop queues on_stop, then waits until every queued hook has run. If ctx
// ends first, the running hook is killed, the rest are dropped, and Stop
// returns ctx.Err(). Callbacks after Stop queue nothing.
func (h *Hooks) Stop(ctx context.Context) error {
	h.mu.Lock()
	if !h.stopped {
		h.flushPendingLocked()
		h.enqueueLocked(OnStop, h.cfg.OnStop)
		h.stopped = true
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
	h.mu.Unlock()
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		h.mu.Lock()
		h.queue = nil
		h.mu.Unlock()
		h.killHook()
		<-h.done
		return ctx.Err()
	}
}

func (h *Hooks) worker() {
	defer close(h.done)
	for {
		h.mu.Lock()
		if len(h.queue) == 0 {
			stopped := h.stopped
			h.mu.Unlock()
			if stopped {
				return
			}
			<-h.wake
			continue
		}
		ev := h.queue[0]
		h.queue = h.queue[1:]
		h.mu.Unlock()
		h.exec(ev)
	}
}

// exec runs one hook with its timeout. Failures are logged, never
// returned: a hook cannot change the election.
func (h *Hooks) exec(ev event) {
	ctx, cancel := context.WithTimeout(h.kill, ev.timeout)
	defer cancel()
	log := h.log.With("hook", ev.hook, "role", ev.role, "term", ev.term)
	env := h.environ
	if env == nil {
		env = os.Environ()
	}
	env = append(append(append([]string(nil), env...), ev.env...),
		"LANLEADER_HOOK="+ev.hook,
		"LANLEADER_ROLE="+ev.role,
		"LANLEADER_TERM="+strconv.FormatUint(ev.term, 10),
		"LANLEADER_LEADER_ID="+ev.leader,
		"LANLEADER_NODE="+h.node,
	)
	log.Info("hooks: running")
	res := h.run(ctx, proc.Spec{
		Argv:      ev.cmd.argv(),
		Env:       env,
		KillGrace: KillGrace,
		OnLine: func(s proc.Stream, line string, partial bool) {
			log.Info("hooks: output", "stream", string(s), "line", line)
		},
	})
	result := "ok"
	switch {
	case res.Stopped:
		result = "timeout"
		log.Error("hooks: killed after timeout", "timeout", ev.timeout, "result", res.String())
	case !res.OK():
		result = "failed"
		log.Error("hooks: failed", "result", res.String(), "duration", res.Duration)
	default:
		log.Info("hooks: done", "duration", res.Duration)
	}
	if h.onResult != nil {
		h.onResult(ev.hook, result)
	}
}
