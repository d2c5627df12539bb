package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lanleader/lanleader/config"
)

// runFlags are the flags run and check-config share: the config file,
// the common election settings and every mode's own.
type runFlags struct {
	s     settings
	modes []Mode
	// mode holds each mode's settings, by name.
	mode  map[string]ModeSettings
	flags *pflag.FlagSet
	// readFile reads the config file; nil means os.ReadFile (tests give a
	// file that changes between reads).
	readFile func(name string) ([]byte, error)
}

func addRunFlags(cmd *cobra.Command, modes []Mode) *runFlags {
	return newRunFlags(cmd.Flags(), modes)
}

func newRunFlags(fs *pflag.FlagSet, modes []Mode) *runFlags {
	rf := &runFlags{s: defaultSettings(), modes: modes, mode: map[string]ModeSettings{}, flags: fs}
	fs.StringVarP(&rf.s.ConfigPath, "config", "c", DefaultConfigPath, "YAML config file with election settings, jobs and hooks")
	commonFlags(fs, &rf.s, modes)
	for _, m := range modes {
		rf.mode[m.Name] = m.Setup(fs)
	}
	fs.StringVar(&rf.s.LogFormat, "log-format", rf.s.LogFormat, "log format: text or json")
	fs.StringVar(&rf.s.LogLevel, "log-level", rf.s.LogLevel, "log level: debug, info, warn or error")
	fs.DurationVar(&rf.s.StopGrace, "stop-grace", rf.s.StopGrace, "at stop, how long finish-policy runs and on_stop may take before they are killed")
	fs.SortFlags = false
	return rf
}

// fresh returns runFlags with fresh defaults and the same flags given
// explicitly, so a reloaded file is validated exactly as at start.
func (rf *runFlags) fresh() (*runFlags, error) {
	fs := pflag.NewFlagSet("reload", pflag.ContinueOnError)
	nrf := newRunFlags(fs, rf.modes)
	nrf.s.ConfigPath = rf.s.ConfigPath
	nrf.readFile = rf.readFile
	var errs []error
	rf.flags.Visit(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) == nil {
			return
		}
		if err := fs.Set(f.Name, f.Value.String()); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", f.Name, err))
		}
	})
	return nrf, errors.Join(errs...)
}

// runConfig is a validated configuration: what run starts with and what
// check-config reports on.
type runConfig struct {
	s        settings
	mode     *Mode
	ms       ModeSettings
	file     *config.File
	warnings []string
	// checkOnly are warnings check-config prints and run does not log:
	// run says the same as it acts (Source.warnCheckOnly).
	checkOnly []string
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
// validation path of run, check-config and reload. Every problem is
// reported at once, as a ConfigError; warnings (things that do not stop a
// start) come back in runConfig.warnings and checkOnly.
func (rf *runFlags) load() (*runConfig, error) {
	file, err := config.LoadWith(rf.s.ConfigPath, config.Options{ElectionKeys: electionKeys(rf.modes), ReadFile: rf.readFile})
	if file == nil {
		if errors.Is(err, fs.ErrNotExist) && !rf.flags.Changed("config") {
			err = fmt.Errorf("%w (give the file with --config)", err)
		}
		return nil, ConfigError{err}
	}
	// A file with errors still has its valid parts decoded: check the
	// election settings too, so every problem is reported at once.
	errs := []error{err}
	src := &Source{File: file, flags: rf.flags}
	if file.Reads > 2 {
		src.Warn("%s changed while it was read: taken as it stood for %v after %d reads; write it elsewhere and rename it into place (mv), which replaces it at once",
			file.Path, config.SettleGap, file.Reads)
	}
	s := rf.s
	s.merge(src)
	if err := s.validate(src, rf.modes); err != nil {
		return nil, ConfigError{errors.Join(append(errs, err)...)}
	}
	src.NodeID = s.NodeID
	if err := checkHTTPAddr(s.HTTP); err != nil {
		errs = append(errs, src.Problem("http", "http", "%v", err))
	}
	for _, h := range s.HTTPHosts {
		if !validHostname(h) || net.ParseIP(h) != nil {
			errs = append(errs, src.Problem("http_hosts", "http-hosts", "%q: want a host name such as nas.lan (IP addresses, localhost and the name in http are allowed without listing)", h))
		}
	}
	mode := findMode(rf.modes, s.Mode)
	ms := rf.mode[mode.Name]
	errs = append(errs, ms.Load(src))
	leaveOutRuns(src, file, ms)
	if _, _, err := newLogger(io.Discard, s.LogFormat, s.LogLevel); err != nil {
		errs = append(errs, err)
	}
	checkJobs(src, file)
	checkLeaderLoss(src, file, ms.Succession())
	if err := errors.Join(errs...); err != nil {
		return nil, ConfigError{err}
	}
	return &runConfig{s: s, mode: mode, ms: ms, file: file, warnings: src.warnings, checkOnly: src.checkOnly}, nil
}

// neverLeader is a mode's settings for a node that never leads (a udp
// witness).
type neverLeader interface{ neverLeads() bool }

// leaveOutRuns leaves the file's jobs and services out on a node that
// never leads, with a warning: they run on the leader, and one file may
// serve every node, the witness included. check-config, run and reload all
// see the file without them.
func leaveOutRuns(src *Source, file *config.File, ms ModeSettings) {
	nl, ok := ms.(neverLeader)
	if !ok || !nl.neverLeads() || len(file.Jobs)+len(file.Services) == 0 {
		return
	}
	src.Warn("role witness: this node never leads, so the %d jobs and %d services of %s run on the leader, never here",
		len(file.Jobs), len(file.Services), file.Path)
	file.Jobs, file.Services = nil, nil
}

// runCmdName is run's name: the command that answers SIGHUP by reloading.
const runCmdName = "run"

// newRunCmd is run. hup are the hangups Main caught; nil (Execute) makes
// run catch its own from its start until it returns.
func newRunCmd(modes []Mode, hup hangups) *cobra.Command {
	cmd := &cobra.Command{
		Use:   runCmdName + " [flags]",
		Short: "take part in the election and run jobs while leading",
		Long: `Run takes part in the election of the chosen mode and runs the config file's
jobs while this node leads. Flags given explicitly win over the file's
election: section. Everything is validated first, as check-config does.

SIGHUP (systemctl reload) re-reads the file: jobs and hooks change live,
leadership is kept; a file with errors is refused and logged. A SIGHUP
during start-up (waiting for the bind address, say) is logged and the file
is re-read once the jobs are running. SIGTERM or
SIGINT leaves the election cleanly (a leader hands over at once) and exits 0.
Under systemd (NOTIFY_SOCKET) it reports READY=1 once joined, RELOADING=1,
STOPPING=1 and WATCHDOG=1.

Exit codes: 0 stopped, 1 runtime failure (status port taken, socket error),
2 usage error, 3 invalid config file or flag value.`,
		Example: `  lanleader run --config /etc/lanleader/lanleader.yaml
  lanleader run --mode=static --leader "$(uname -n)" --config examples/demo.yaml
  lanleader run --config app.yaml --peers 10.0.0.1:7483,10.0.0.2:7483 --secret-file /etc/lanleader/key`,
		Args: noArgs,
	}
	rf := addRunFlags(cmd, modes)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		hup := hup
		if hup == nil {
			var stop func()
			hup, stop = catchHangups()
			defer stop()
		}
		// Everything is validated before anything touches the network.
		rc, err := rf.load()
		if err != nil {
			return err
		}
		logger, level, err := newLogger(cmd.ErrOrStderr(), rc.s.LogFormat, rc.s.LogLevel)
		if err != nil {
			return ConfigError{err}
		}
		logger = logger.With("node", rc.s.NodeID)
		idleRuntime()
		return runDaemon(cmd.Context(), rf, rc, logger, level, hup)
	}
	return cmd
}
