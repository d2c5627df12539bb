// Command lanleader keeps exactly one leader among the servers of a LAN and
// runs cron jobs only on that leader, with no store: the nodes agree among
// themselves.
//
//	lanleader run --mode=udp --config /etc/lanleader.yaml
//
// See "lanleader help" and docs/operations.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes. systemd units use RestartPreventExitStatus=2 3 so that a bad
// command line or config does not restart in a loop.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime failure (could not bind, ...)
	exitUsage   = 2 // a wrong flag or argument
	exitConfig  = 3 // the config file or a flag value is invalid
)

// usageError marks errors that are the caller's wrong flags or arguments.
type usageError struct {
	err error
	// printed is set when the flag package already printed the error and
	// the usage, so runMain does not repeat it.
	printed bool
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// configError marks invalid configuration (file or flag values).
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }

// command is one subcommand: its one-line summary and its body, which parses
// its own flags from args.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"run":          {"take part in the election and run jobs while leading", runCmd},
		"check-config": {"validate a config file and print each job's next runs", checkConfigCmd},
		"status":       {"print this node's status from its HTTP endpoint", statusCmd},
		"who":          {"ask the LAN who leads", whoCmd},
		"demo":         {"run a 3-node cluster on loopback and kill its leader", demoCmd},
		"version":      {"print the version", versionCmd},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain dispatches to a subcommand and maps its error to an exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "lanleader: unknown command %q\n\n", args[0])
		printUsage(stderr)
		return exitUsage
	}
	err := cmd.run(ctx, args[1:], stdout, stderr)
	var ue usageError
	var ce configError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		if !ue.printed {
			fmt.Fprintf(stderr, "lanleader %s: %v\n", args[0], err)
		}
		return exitUsage
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "lanleader %s: %v\n", args[0], err)
		return exitConfig
	default:
		fmt.Fprintf(stderr, "lanleader %s: %v\n", args[0], err)
		return exitFailure
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: lanleader <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, name := range []string{"run", "check-config", "status", "who", "demo", "version"} {
		fmt.Fprintf(w, "  %-13s %s\n", name, commands()[name].summary)
	}
	fmt.Fprintln(w, "\nRun 'lanleader <command> -h' for a command's flags.")
}

// newFlagSet returns a flag set that reports errors instead of exiting, so
// runMain can map them to exit code 2.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("lanleader "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and wraps failures as usage errors. It rejects
// positional arguments beyond maxArgs.
func parseFlags(fs *flag.FlagSet, args []string, maxArgs int) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err: err, printed: true}
	}
	if fs.NArg() > maxArgs {
		return usageError{err: fmt.Errorf("unexpected argument %q", fs.Arg(maxArgs))}
	}
	return nil
}
