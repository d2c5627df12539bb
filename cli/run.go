package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

// runFlags are the flags run and check-config share: the config file,
// the common election settings and every mode's own.
type runFlags struct {
	s     settings
	modes []Mode
	// mode holds each mode's settings, by name.
	mode  map[string]ModeSettings
	flags *pflag.FlagSet
}

func addRunFlags(cmd *cobra.Command, modes []Mode) *runFlags {
	rf := &runFlags{s: defaultSettings(), modes: modes, mode: map[string]ModeSettings{}, flags: cmd.Flags()}
	fs := cmd.Flags()
	fs.StringVarP(&rf.s.ConfigPath, "config", "c", DefaultConfigPath, "YAML config file with election settings, jobs and hooks")
	commonFlags(fs, &rf.s, modes)
	for _, m := range modes {
		rf.mode[m.Name] = m.Setup(fs)
	}
	fs.StringVar(&rf.s.LogFormat, "log-format", rf.s.LogFormat, "log format: text or json")
	fs.StringVar(&rf.s.LogLevel, "log-level", rf.s.LogLevel, "log level: debug, info, warn or error")
	fs.SortFlags = false
	return rf
}

// runConfig is a validated configuration: what run starts with and what
// check-config reports on.
type runConfig struct {
	s    settings
	mode *Mode
	ms   ModeSettings
	file *config.File
}

// electionKeys are the keys under election: that the modes claim.
func electionKeys(modes []Mode) []string {
	var keys []string
	for _, m := range modes {
		keys = append(keys, m.Keys...)
	}
	return keys
}

// load reads and validates the config file and the flags: the one
// validation path of run and check-config. Every problem is reported at
// once, as a ConfigError.
func (rf *runFlags) load() (*runConfig, error) {
	file, err := config.LoadWith(rf.s.ConfigPath, config.Options{ElectionKeys: electionKeys(rf.modes)})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !rf.flags.Changed("config") {
			err = fmt.Errorf("%w (give the file with --config)", err)
		}
		return nil, ConfigError{err}
	}
	src := &Source{File: file, flags: rf.flags}
	s := rf.s
	s.merge(src)
	if err := s.validate(src, rf.modes); err != nil {
		return nil, ConfigError{err}
	}
	mode := findMode(rf.modes, s.Mode)
	ms := rf.mode[mode.Name]
	var errs []error
	if err := ms.Load(src); err != nil {
		errs = append(errs, err)
	}
	if _, err := newLogger(io.Discard, s.LogFormat, s.LogLevel); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, ConfigError{err}
	}
	return &runConfig{s: s, mode: mode, ms: ms, file: file}, nil
}

func newRunCmd(modes []Mode) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [flags]",
		Short: "take part in the election and run jobs while leading",
		Long: `Run takes part in the election of the chosen mode and runs the config file's
jobs while this node leads. Flags given explicitly win over the file's
election: section. SIGTERM or SIGINT leaves the election cleanly (a leader
hands over at once) and exits 0.`,
		Example: `  lanleader run --config /etc/lanleader/lanleader.yaml
  lanleader run --mode=static --leader "$(hostname)" --config examples/demo.yaml
  lanleader run --config app.yaml --peers 10.0.0.1:7483,10.0.0.2:7483 --secret-file /etc/lanleader/key`,
		Args: noArgs,
	}
	rf := addRunFlags(cmd, modes)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		// Everything is validated before anything touches the network.
		rc, err := rf.load()
		if err != nil {
			return err
		}
		logger, err := newLogger(cmd.ErrOrStderr(), rc.s.LogFormat, rc.s.LogLevel)
		if err != nil {
			return ConfigError{err}
		}
		logger = logger.With("node", rc.s.NodeID)
		return runDaemon(cmd.Context(), rc, logger)
	}
	return cmd
}

// runDaemon wires the elector, the job runner, hooks, metrics and the HTTP
// endpoint, runs until ctx is done, then shuts down in order: leave the
// election (jobs are cancelled or finish per policy), wait for runs, run
// on_stop, stop serving.
func runDaemon(ctx context.Context, rc *runConfig, logger *slog.Logger) error {
	s, file := rc.s, rc.file
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
	el, err := rc.ms.New(Env{
		NodeID:      s.NodeID,
		Logger:      logger,
		Metrics:     m,
		Ledger:      func() []byte { return runner.Ledger() },
		AdoptLedger: adopt,
	})
	if err != nil {
		return err
	}

	runner, err = jobs.NewRunner(jobs.RunnerConfig{
		Jobs:   file.Jobs,
		Node:   s.NodeID,
		Logger: logger,
		CanRun: el.canRun(),
		OnLedgerChange: func() {
			if el.Publish != nil {
				el.Publish()
			}
		},
		OnRunFinished: func(rec jobs.RunRecord) { m.JobFinished(rec.Job, rec.Outcome.String(), rec.Duration) },
	})
	if err != nil {
		return ConfigError{fmt.Errorf("%s: %w", file.Path, err)}
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
			Extra:   el.View,
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
