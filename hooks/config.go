package hooks

import "time"

// DefaultTimeout bounds each hook run when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// KillGrace is the time between SIGTERM and SIGKILL for a hook that ran
// past its timeout.
const KillGrace = 5 * time.Second

// MaxQueued bounds the hooks waiting to run. Only a node flapping faster
// than its hooks complete fills it; past it new transitions' hooks are
// dropped and logged, rather than memory growing without bound.
const MaxQueued = 1024

// Command is a hook command: either an argv list run without a shell, or a
// shell string run with /bin/sh -c. The zero Command means "no hook".
type Command struct {
	// Argv is the program and its arguments.
	Argv []string
	// Shell is a script for /bin/sh -c; used when Argv is empty.
	Shell string
}

// IsZero reports whether no command is set.
func (c Command) IsZero() bool { return len(c.Argv) == 0 && c.Shell == "" }

// argv returns the argv to execute.
func (c Command) argv() []string {
	if len(c.Argv) > 0 {
		return c.Argv
	}
	return []string{"/bin/sh", "-c", c.Shell}
}

// Config is the hooks: section of the config file.
type Config struct {
	// OnLeader runs when this node becomes leader.
	OnLeader Command
	// OnFollower runs when this node stops leading, and once at startup
	// when it first learns it is a follower.
	OnFollower Command
	// OnStop runs once when the process stops.
	OnStop Command
	// OnJobFailure runs when any job's run fails for good (every retry
	// used; not when it is cancelled), after the job's own OnFailure.
	OnJobFailure Command
	// OnServiceExit runs when a service's copy exits while this node
	// leads, before it is restarted.
	OnServiceExit Command
	// JobOnFailure holds each job's own on_failure command, by job name.
	JobOnFailure map[string]Command
	// Timeout bounds each hook run; a hook still running then is killed
	// (SIGTERM to its process group, SIGKILL KillGrace later). Zero means
	// DefaultTimeout.
	Timeout time.Duration

	// Node is this node's id (LANLEADER_NODE). Not a config file key: the
	// CLI fills it in.
	Node string
	// Environ is the base environment of hook runs; nil means
	// os.Environ(). Not a config file key.
	Environ []string
	// OnResult, if set, is told each finished hook run: the hook's name and
	// "ok", "failed" or "timeout" (for metrics). Not a config file key.
	OnResult func(hook, result string)
}
