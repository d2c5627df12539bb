package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/internal/version"
)

// Exit codes. The systemd unit uses RestartPreventExitStatus=2 so that a
// wrong command line does not restart in a loop.
const (
	ExitOK      = 0
	ExitFailure = 1 // a runtime failure (could not bind, ...)
	ExitUsage   = 2 // a wrong command, flag or argument
	ExitConfig  = 3 // the config file or a flag value is invalid
)

// usageError marks errors that are the caller's wrong flags or arguments.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// silentError is an error the command already reported (check-config
// --json); Execute only maps it to its exit code.
type silentError struct{ err error }

func (e silentError) Error() string { return e.err.Error() }

// ConfigError marks invalid configuration (a file or flag value): exit
// code 3. Modes wrap their setting errors in it.
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// Main runs the lanleader command line with the built-in modes and the
// given extra ones, and exits. SIGINT and SIGTERM stop a running command
// cleanly. SIGHUP is caught from Main's first instruction (see hangups):
// run reloads its config file, any other command stops.
func Main(extra ...Mode) {
	hup, _ := catchHangups() // caught until the process exits
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := executeMain(ctx, hup, os.Args[1:], os.Stdout, os.Stderr, extra...)
	stop()
	os.Exit(code)
}

// Execute runs the command line args (without the program name) with the
// built-in modes and the extra ones, and returns the exit code. Tests and
// embedding programs use it instead of Main. Unlike Main it leaves SIGHUP
// alone except while run runs, which catches it from its start.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer, extra ...Mode) int {
	return executeMain(ctx, nil, args, stdout, stderr, extra...)
}

// executeMain is Execute with the hangups Main caught (nil: none).
func executeMain(ctx context.Context, hup hangups, args []string, stdout, stderr io.Writer, extra ...Mode) int {
	modes := append(BuiltinModes(), extra...)
	checkModes(modes)
	root := newRootCmd(modes, hup)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	name := cmd.CommandPath()
	var ue usageError
	var ce ConfigError
	var es exitStatus
	switch {
	case errors.As(err, &es):
		if !errors.As(err, new(silentError)) {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
		}
		return es.code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", name, err, name)
		return ExitUsage
	case errors.As(err, &ce):
		if !errors.As(err, new(silentError)) {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
		}
		return ExitConfig
	default:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
}

// newRootCmd builds the whole command tree. Each call builds fresh flag
// values, so one process can run several command lines (tests do). hup,
// if not nil, are the hangups Main caught: run answers them, any other
// command stops on one.
func newRootCmd(modes []Mode, hup hangups) *cobra.Command {
	root := &cobra.Command{
		Use:   "lanleader",
		Short: "keep one leader among the servers of a LAN and run cron jobs only there",
		Long: `lanleader keeps exactly one leader among the servers of a LAN and runs cron
jobs only on that leader, with no store: the nodes agree among themselves.

Configuration: ` + DefaultConfigPath + ` (see docs/configuration.md).`,
		Example: `  lanleader run --config /etc/lanleader/lanleader.yaml
  lanleader check-config /etc/lanleader/lanleader.yaml
  lanleader status
  lanleader demo`,
		Version:       version.String() + " (" + version.GoVersion() + ")",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return usageError{errors.New(msg)}
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			return usageError{errors.New("a command is required")}
		},
	}
	if hup != nil {
		root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
			if cmd.Name() != runCmdName {
				cmd.SetContext(hup.stopping(cmd.Context()))
			}
		}
	}
	root.SuggestionsMinimumDistance = 2
	root.SetHelpCommand(newHelpCmd())
	root.SetVersionTemplate("lanleader {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newRunCmd(modes, hup),
		newCheckConfigCmd(modes),
		newStatusCmd(),
		newIsLeaderCmd(),
		newJobsCmd(),
		newTriggerCmd(),
		newKeygenCmd(),
		newWhoCmd(),
		newDemoCmd(),
		newVersionCmd(),
		newManCmd(),
	)
	return root
}

// newHelpCmd is "help [command]". cobra's own would show the root's help,
// with exit 0, for a topic that names no command (the root takes
// arguments to say "unknown command" itself).
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "help about any command",
		Long:  "Help prints the help of a command, the same as COMMAND --help.",
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var names []cobra.Completion
			if len(args) == 0 {
				for _, sub := range c.Root().Commands() {
					if sub.IsAvailableCommand() {
						names = append(names, sub.Name())
					}
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				msg := fmt.Sprintf("unknown help topic %q", strings.Join(args, " "))
				if s := c.Root().SuggestionsFor(args[0]); len(s) > 0 {
					msg += fmt.Sprintf(" (did you mean %q?)", s[0])
				}
				return usageError{errors.New(msg)}
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}

// noArgs rejects positional arguments as a usage error.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", args[0])}
	}
	return nil
}

// exactArgs wants n positional arguments, named what in the error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == n:
		case len(args) == 0:
			return usageError{fmt.Errorf("want exactly %d %s, got none", n, what)}
		default:
			return usageError{fmt.Errorf("want exactly %d %s, got %d: %s", n, what, len(args), strings.Join(args, " "))}
		}
		return nil
	}
}
