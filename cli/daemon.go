package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/hooks"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/internal/proc"
	"github.com/lanleader/lanleader/internal/version"
	"github.com/lanleader/lanleader/jobs"
	"github.com/lanleader/lanleader/metrics"
	"github.com/lanleader/lanleader/trigger"
)

// daemon is one `lanleader run`: the elector, the job runner, the hooks and
// the status endpoint, and the configuration they were built from.
type daemon struct {
	rf     *runFlags
	log    *slog.Logger
	level  *slog.LevelVar // the logger's, changed by a reload
	notify *sdNotifier
	el     *Elector
	runner *jobs.Runner
	hooks  *hooks.Hooks
	// trigger answers `lanleader trigger` requests (udp mode).
	trigger *trigger.Handler

	mu sync.Mutex
	rc *runConfig // the configuration in force
}

// runDaemon wires the elector, the job runner, hooks, metrics and the HTTP
// endpoint, runs until ctx is done, then shuts down in order: leave the
// election (jobs are cancelled or finish per policy), wait for runs, run
// on_stop, stop serving. Each hangup (SIGHUP) reloads the config file
// meanwhile; one during start-up, once the jobs are running.
func runDaemon(ctx context.Context, rf *runFlags, rc *runConfig, logger *slog.Logger, level *slog.LevelVar, hup hangups) error {
	s, file := rc.s, rc.file
	d := &daemon{rf: rf, rc: rc, log: logger, level: level, notify: &sdNotifier{log: logger}}
	running := make(chan struct{}) // closed once a reload can apply
	hupCtx, stopHangups := context.WithCancel(context.Background())
	hupDone := make(chan struct{})
	go func() {
		defer close(hupDone)
		d.answerHangups(hupCtx, hup, running)
	}()
	defer func() {
		stopHangups()
		<-hupDone
	}()
	m := metrics.New(version.String())

	// The status address is taken before anything else, so a taken port
	// fails the start rather than leaving a node without status.
	var ln net.Listener
	if s.HTTP != "" {
		var err error
		if ln, err = net.Listen("tcp", s.HTTP); err != nil {
			return fmt.Errorf("status endpoint --http (election.http) %s: %w", s.HTTP, err)
		}
		defer ln.Close()
	}

	// The runner is built after the elector but used by it only once Run
	// starts: a udp leader piggybacks the runner's ledger on heartbeats, and
	// followers adopt what they hear synchronously, before a takeover is
	// reported, so the new leader knows what the old one started.
	store, err := openState(s, logger)
	if err != nil {
		return err
	}
	if store != nil {
		defer store.Close()
	}
	persist := statePersister{store: store, runner: func() *jobs.Runner { return d.runner }, log: logger, unkept: new(atomic.Bool)}
	for _, w := range rc.warnings {
		logger.Warn(w)
	}
	d.trigger = &trigger.Handler{Logger: logger}
	el, err := rc.ms.New(Env{
		Context:     ctx,
		NodeID:      s.NodeID,
		Logger:      logger,
		Metrics:     m,
		Ledger:      func() []byte { return d.runner.Ledger() },
		StateLedger: func() []byte { return d.runner.StateLedger() },
		AdoptLedger: persist.adopt,
		State:       store,
		Request: func(from, addr string, p []byte) []byte {
			return d.trigger.Handle(trigger.Sender{ID: from, Addr: addr}, p)
		},
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Told to stop while the mode waited (for its address): a
			// clean stop, not a failure.
			logger.Info("lanleader stopped before joining", "why", err.Error())
			return nil
		}
		return err
	}
	d.el = el
	if el.Cluster == nil {
		return fmt.Errorf("mode %s: its Elector has no jobs.Cluster (jobs.Alone for a mode that coordinates nothing)", s.Mode)
	}
	d.trigger.Refuse = el.RefuseRequests

	d.runner, err = jobs.NewRunner(persist.cluster(el.Cluster), jobs.RunnerConfig{
		Jobs:     file.Jobs,
		Services: file.Services,
		Node:     s.NodeID,
		Logger:   logger,
		OnServiceExit: func(e jobs.ServiceExit) {
			d.hooks.ServiceExited(hooks.ServiceExit{Service: e.Service, Term: e.Term, ExitCode: e.ExitCode,
				Error: e.Result, Restarts: e.Restarts, Output: e.Output})
		},
		OnRunFinished: func(rec jobs.RunRecord) {
			m.JobFinished(rec.Job, rec.Outcome.String(), rec.Duration)
			persist.saveRun()
			if rec.Outcome == jobs.OutcomeFailed {
				d.hooks.JobFailed(hooks.JobFailure{Job: rec.Job, RunID: rec.RunID, ScheduledAt: rec.ScheduledAt,
					Term: rec.Term, ExitCode: rec.ExitCode, Attempt: rec.Attempt, Error: rec.Error, Output: rec.Output})
			}
		},
	})
	if err != nil {
		return ConfigError{fmt.Errorf("%s: %w", file.Path, err)}
	}
	persist.restore(d.runner)
	d.trigger.Runner = d.runner
	hookCfg := file.Hooks
	hookCfg.Node = s.NodeID
	hookCfg.OnResult = m.HookFinished
	d.hooks = hooks.New(hookCfg, logger)
	m.WatchJobs(d.runner.Snapshot)
	m.WatchServices(d.runner.Services)

	runCtx, stopAux := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAux()
	var wg sync.WaitGroup
	changes := httpapi.NewChangeLog(s.NodeID)
	if ln != nil {
		srv := httpapi.New(httpapi.Config{
			Elector:     el.Elector,
			MayAct:      d.runner.MayAct,
			Jobs:        func() []jobs.JobStatus { return d.runner.Snapshot() },
			JobViews:    func(n int) []jobs.JobView { return d.runner.Jobs(n) },
			Services:    func() []jobs.ServiceStatus { return d.runner.Services() },
			Extra:       el.View,
			Nodes:       el.Nodes,
			Quorum:      el.Quorum,
			Changes:     changes,
			Metrics:     m,
			Version:     version.String(),
			Logger:      logger,
			Hosts:       endpointNames(s),
			OutputTails: s.HTTPOutputTails,
		})
		wg.Go(func() {
			if err := srv.ServeListener(runCtx, ln); err != nil {
				logger.Error("status endpoint stopped", "addr", s.HTTP, "err", err)
			}
		})
	}
	// Processes reparented to lanleader (what a killed run left) are killed
	// and reaped; every child of lanleader is started by internal/proc.
	wg.Go(func() {
		if err := proc.AdoptOrphans(runCtx, logger); err != nil {
			logger.Warn("cannot become child subreaper: a job's leftovers may outlive it", "err", err)
		}
	})
	wg.Go(func() { d.notify.watch(runCtx, d.joined, d.started, d.alive) })
	close(running)

	logger.Info("lanleader starting", "version", version.String(), "mode", s.Mode,
		"jobs", len(file.Jobs), "services", len(file.Services), "config", file.Path, "http", s.HTTP)
	cb := election.Combine(logCallbacks(ctx, logger, s.NodeID, el.Why), m.Callbacks(), d.runner.Callbacks(), d.hooks.Callbacks(), changes.Callbacks())
	// Stop order: runs end first (cancel, or finish within stop_grace)
	// while the elector keeps running, so a leader keeps heartbeating and
	// nobody takes over and starts a job beside a run of ours; then the
	// elector resigns.
	// stop_grace counts from the stop, not from the start: the deadline is
	// set by the first caller of stopDeadline, once ctx ends (or the
	// elector failed).
	var grace struct {
		once   sync.Once
		ctx    context.Context
		cancel context.CancelFunc
	}
	stopDeadline := func() context.Context {
		grace.once.Do(func() { grace.ctx, grace.cancel = context.WithTimeout(context.Background(), s.StopGrace) })
		return grace.ctx
	}
	defer func() {
		if grace.cancel != nil {
			grace.cancel()
		}
	}()
	elCtx, stopElector := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElector()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		select {
		case <-elCtx.Done(): // the elector failed on its own
			return
		case <-ctx.Done():
		}
		d.notify.stopping()
		if err := d.runner.Drain(stopDeadline()); err != nil {
			logger.Warn("jobs still running at shutdown were killed", "err", err)
		}
		if el.Flush != nil {
			if err := el.Flush(stopDeadline()); err != nil {
				logger.Warn("the runs' outcomes were not all recorded before resigning; the next leader takes them for interrupted", "err", err)
			}
		}
		stopElector()
	}()
	runErr := el.Run(elCtx, cb)
	stopElector()
	<-drained
	shutdown := stopDeadline()
	d.notify.stopping()

	// Leadership has ended: the scheduling loops stop.
	if err := d.runner.Wait(shutdown); err != nil {
		logger.Warn("jobs still running at shutdown were killed", "err", err)
	}
	if err := d.hooks.Stop(shutdown); err != nil {
		logger.Warn("hooks still running at shutdown were killed", "err", err)
	}
	stopAux()
	stopHangups()
	wg.Wait()
	if runErr != nil {
		return runErr
	}
	logger.Info("lanleader stopped")
	return nil
}

// joined reports whether the node has joined its cluster, as /readyz does.
func (d *daemon) joined() bool {
	ok, _ := httpapi.Readiness(d.el.Elector, d.el.Status())
	return ok
}

// started runs once the node has joined: start-up is over.
func (d *daemon) started() {
	n, err := releaseStartupPages()
	if err != nil {
		d.log.Debug("cannot release the start-up pages of the executable", "err", err)
		return
	}
	d.log.Debug("released the start-up pages of the executable", "bytes", n)
}

// alive returns once the elector and the runner answered: both take their
// locks, so a stuck loop holding one stops the watchdog pings.
func (d *daemon) alive() {
	_ = d.el.Status()
	_ = d.runner.Snapshot()
}

// noLeaderKnown is the leader attribute of "leader changed" when no leader
// is known (the demo reads it back).
const noLeaderKnown = "none known"

// logCallbacks logs every leadership transition with fixed messages that
// scripts (scripts/netns-test.sh) and operators grep for, and why a
// leadership ended: stopping (ctx done), or what the mode's why says.
func logCallbacks(ctx context.Context, logger *slog.Logger, node string, why func() string) election.Callbacks {
	var last election.LeaderInfo // callbacks are called one at a time
	return election.Callbacks{
		OnStartedLeading: func(_ context.Context, term uint64) {
			if why != nil {
				why()
			}
			logger.Info("became leader", "term", term)
		},
		OnStoppedLeading: func() {
			reason := ""
			switch {
			case ctx.Err() != nil:
				reason = "stopping"
			case why != nil:
				reason = why()
			}
			if reason == "" {
				reason = "unknown"
			}
			logger.Info("stopped leading", "reason", reason)
		},
		OnNewLeader: func(l election.LeaderInfo) {
			prev := last
			last = l
			if !l.Known() {
				// Expected while stopping; a warning otherwise: the
				// leader fell silent, resigned or lost its quorum.
				level := slog.LevelWarn
				if ctx.Err() != nil {
					level = slog.LevelInfo
				}
				logger.Log(context.Background(), level, "leader changed", "leader", noLeaderKnown,
					"previous", prev.ID, "previous_term", prev.Term)
				return
			}
			logger.Info("leader changed", "leader", l.ID, "addr", l.Addr, "term", l.Term, "self", l.ID == node)
		},
	}
}
