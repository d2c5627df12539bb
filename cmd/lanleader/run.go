package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/lanleader/lanleader/config"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/hooks"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/internal/version"
	"github.com/lanleader/lanleader/jobs"
	"github.com/lanleader/lanleader/metrics"
)

// shutdownGrace bounds how long `run` waits, after leaving the election, for
// on_leader_loss: finish runs and the on_stop hook before it kills them.
const shutdownGrace = 30 * time.Second

func runCmd(ctx context.Context, args []string, _, stderr io.Writer) error {
	s := defaultSettings()
	fs := newFlagSet("run", stderr)
	fs.StringVar(&s.ConfigPath, "config", "", "YAML config file with jobs and hooks (required)")
	electionFlags(fs, &s)
	fs.StringVar(&s.HTTP, "http", s.HTTP, "status and metrics endpoint address; empty turns it off")
	fs.StringVar(&s.LogFormat, "log-format", s.LogFormat, "log format: text or json")
	fs.StringVar(&s.LogLevel, "log-level", s.LogLevel, "log level: debug, info, warn or error")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if s.ConfigPath == "" {
		return usageError{err: errors.New("--config FILE is required (see examples/demo.yaml)")}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	// Everything is validated before anything touches the network.
	file, err := config.Load(s.ConfigPath)
	if err != nil {
		return configError{err}
	}
	mergeFile(&s, file.Election, set)
	if err := s.validate(); err != nil {
		return configError{describe(err, file, set)}
	}
	logger, err := newLogger(stderr, s.LogFormat, s.LogLevel)
	if err != nil {
		return configError{err}
	}
	logger = logger.With("node", s.NodeID)
	return runDaemon(ctx, s, file, logger)
}

// runDaemon wires the elector, the job runner, hooks, metrics and the HTTP
// endpoint, runs until ctx is done, then shuts down in order: leave the
// election (jobs are cancelled or finish per policy), wait for runs, run
// on_stop, stop serving.
func runDaemon(ctx context.Context, s settings, file *config.File, logger *slog.Logger) error {
	m := metrics.New(version.String())
	// The runner is built after the elector but used by it only once Run
	// starts: a udp leader piggybacks the runner's ledger on heartbeats, and
	// followers adopt what they hear synchronously, before a takeover is
	// reported, so the new leader knows what the old one started.
	var runner *jobs.Runner
	adopt := func(p []byte) {
		if err := runner.AdoptLedger(p); err != nil {
			logger.Warn("ignoring a leader's job ledger that does not decode", "err", err)
		}
	}
	el, err := newElector(s, logger, m, func() []byte { return runner.Ledger() }, adopt)
	if err != nil {
		return err
	}

	runner, err = jobs.NewRunner(jobs.RunnerConfig{
		Jobs:   file.Jobs,
		Node:   s.NodeID,
		Logger: logger,
		CanRun: el.canRun,
		OnLedgerChange: func() {
			if el.publish != nil {
				el.publish()
			}
		},
		OnRunFinished: func(rec jobs.RunRecord) { m.JobFinished(rec.Job, rec.Outcome.String(), rec.Duration) },
	})
	if err != nil {
		return configError{fmt.Errorf("%s: %w", file.Path, err)}
	}
	hookCfg := file.Hooks
	hookCfg.Node = s.NodeID
	hk := hooks.New(hookCfg, logger)

	runCtx, stopAux := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAux()
	var wg sync.WaitGroup
	if s.HTTP != "" {
		srv := httpapi.New(httpapi.Config{
			Elector: el.Elector,
			Jobs:    func() any { return runner.Snapshot() },
			Extra:   el.extra,
			Metrics: m,
			Version: version.String(),
			Logger:  logger,
		})
		wg.Go(func() {
			if err := srv.Serve(runCtx, s.HTTP); err != nil {
				logger.Error("status endpoint stopped", "addr", s.HTTP, "err", err)
			}
		})
	}
	wg.Go(func() { _ = runner.Run(runCtx) })

	logger.Info("lanleader starting", "version", version.String(), "mode", s.Mode,
		"jobs", len(file.Jobs), "config", file.Path, "http", s.HTTP)
	cb := election.Combine(logCallbacks(logger, s.NodeID), m.Callbacks(), runner.Callbacks(), hk.Callbacks())
	runErr := el.Run(ctx, cb)

	// Leadership has ended; cancel-policy runs are being stopped. Give
	// finish-policy runs and on_stop a bounded time.
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := runner.Wait(shutdown); err != nil {
		logger.Warn("jobs still running at shutdown were killed", "err", err)
	}
	if err := hk.Stop(shutdown); err != nil {
		logger.Warn("hooks still running at shutdown were killed", "err", err)
	}
	stopAux()
	wg.Wait()
	if runErr != nil {
		return runErr
	}
	logger.Info("lanleader stopped")
	return nil
}

// logCallbacks logs every leadership transition with fixed messages that
// scripts (scripts/netns-test.sh) and operators grep for.
func logCallbacks(logger *slog.Logger, node string) election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: func(_ context.Context, term uint64) {
			logger.Info("became leader", "term", term)
		},
		OnStoppedLeading: func() {
			logger.Info("stopped leading")
		},
		OnNewLeader: func(l election.LeaderInfo) {
			if !l.Known() {
				logger.Info("leader changed", "leader", "", "term", l.Term)
				return
			}
			logger.Info("leader changed", "leader", l.ID, "addr", l.Addr, "term", l.Term, "self", l.ID == node)
		},
	}
}
