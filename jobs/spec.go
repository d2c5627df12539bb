package jobs

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Defaults for Spec fields left zero.
const (
	// DefaultKillGrace is the time between SIGTERM and SIGKILL when a run is
	// cancelled.
	DefaultKillGrace = 10 * time.Second
)

// Spec is one job as written in the config file. The zero values of the
// policy fields are their defaults.
type Spec struct {
	// Name identifies the job in logs, metrics, the ledger and
	// LANLEADER_JOB. Required, unique within a Runner.
	Name string
	// Schedule is a robfig/cron/v3 spec: 5 fields, or 6 with a leading
	// seconds field, or a descriptor (@every 2s, @hourly, @daily, ...),
	// optionally prefixed with CRON_TZ=Area/City or TZ=Area/City.
	Schedule string
	// Command is the program and its arguments, run without a shell.
	// Exactly one of Command, Shell and HTTP is set.
	Command []string
	// Shell is a script run with /bin/sh -c.
	Shell string
	// HTTP is a request made instead of running a process (an http: job).
	HTTP *HTTPRequest
	// Dir is the working directory; empty means lanleader's. Processes
	// only.
	Dir string
	// Env is added to lanleader's environment for each run; the
	// LANLEADER_* variables cannot be overridden. Processes only.
	Env map[string]string
	// Timeout bounds each attempt; zero means no timeout.
	Timeout time.Duration
	// Overlap says what happens when an instant comes due while a run of
	// the job is still going. Default skip.
	Overlap Overlap
	// Retries is how many times a failed run is retried (so at most
	// Retries+1 attempts per instant).
	Retries int
	// RetryDelay is the wait before each retry.
	RetryDelay time.Duration
	// OnLeaderLoss says what happens to a running job when leadership is
	// lost. Default cancel.
	OnLeaderLoss LeaderLoss
	// Misfire says what happens to instants that fell due while no node
	// could run them. Default run-once.
	Misfire Misfire
	// MisfireGrace is how late an instant may start at all; zero means
	// until the job's next instant (misfire.go): a missed instant runs
	// once, even hours late, unless the next one has come.
	MisfireGrace time.Duration
	// RerunInterrupted makes a new leader run again an instant the ledger
	// shows was still running when the old leader went away.
	RerunInterrupted bool
	// KillGrace is the time between SIGTERM and SIGKILL when a run is
	// cancelled; zero means the Runner's default (DefaultKillGrace).
	// Processes only: a request is aborted at once.
	KillGrace time.Duration
}

// FieldError is a problem with one field of a Spec. Field is the config
// key (e.g. "schedule"), so the config loader can point at its line.
type FieldError struct {
	Field string
	Err   error
}

// Error returns "field: reason".
func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field string, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Validate checks s on its own (not uniqueness of names, which needs all
// jobs). Every problem is reported as a *FieldError; several are joined.
func (s *Spec) Validate() error {
	var errs []error
	if s.Name == "" {
		errs = append(errs, fieldErr("name", "required"))
	}
	if s.Schedule == "" {
		errs = append(errs, fieldErr("schedule", "required"))
	} else if _, err := ParseSchedule(s.Schedule); err != nil {
		errs = append(errs, fieldErr("schedule", "%q: %w", s.Schedule, err))
	}
	switch {
	case s.HTTP != nil && (len(s.Command) > 0 || s.Shell != ""):
		errs = append(errs, fieldErr("http", "http and %s are mutually exclusive", s.kindKey()))
	case s.HTTP == nil:
		errs = append(errs, validateArgv(s.Command, s.Shell, "one of command (argv list), shell (string) or http (a request) is required")...)
	}
	if s.HTTP != nil {
		errs = append(errs, s.HTTP.validate()...)
		for _, f := range []struct {
			field string
			set   bool
		}{{"dir", s.Dir != ""}, {"env", len(s.Env) > 0}, {"kill_grace", s.KillGrace != 0}} {
			if f.set {
				errs = append(errs, fieldErr(f.field, "only for command and shell jobs: an http job's request is aborted at once, and its identity travels in headers"))
			}
		}
	}
	errs = append(errs, validateEnv(s.Env)...)
	errs = append(errs, nonNegative(map[string]time.Duration{"timeout": s.Timeout, "retry_delay": s.RetryDelay,
		"misfire_grace": s.MisfireGrace, "kill_grace": s.KillGrace})...)
	if s.Retries < 0 {
		errs = append(errs, fieldErr("retries", "%d is negative", s.Retries))
	}
	if !s.Overlap.valid() {
		errs = append(errs, fieldErr("overlap", "%d is not a policy", s.Overlap))
	}
	if !s.OnLeaderLoss.valid() {
		errs = append(errs, fieldErr("on_leader_loss", "%d is not a policy", s.OnLeaderLoss))
	}
	if !s.Misfire.valid() {
		errs = append(errs, fieldErr("misfire", "%d is not a policy", s.Misfire))
	}
	return errors.Join(errs...)
}

// ValidateAll validates every spec and checks that names are unique. The
// errors name the job by index and name.
func ValidateAll(specs []Spec) error {
	var errs []error
	seen := map[string]int{}
	for i := range specs {
		if err := specs[i].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("jobs[%d] (%s): %w", i, specs[i].Name, err))
		}
		if n := specs[i].Name; n != "" {
			if j, dup := seen[n]; dup {
				errs = append(errs, fmt.Errorf("jobs[%d]: %w", i, fieldErr("name", "%q already used by jobs[%d]", n, j)))
			} else {
				seen[n] = i
			}
		}
	}
	return errors.Join(errs...)
}

// validateArgv checks what process a job or a service runs: exactly one
// of command and shell, and a program named. none says what is required
// when neither is set.
func validateArgv(command []string, shell, none string) []error {
	switch {
	case len(command) == 0 && shell == "":
		return []error{fieldErr("command", "%s", none)}
	case len(command) > 0 && shell != "":
		return []error{fieldErr("shell", "command and shell are mutually exclusive")}
	case len(command) > 0 && command[0] == "":
		return []error{fieldErr("command", "program (first element) is empty")}
	}
	return nil
}

// validateEnv checks the names of a process's env: FieldErrors of "env".
func validateEnv(env map[string]string) []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if k == "" || containsAny(k, "=\x00") {
			errs = append(errs, fieldErr("env", "bad variable name %q", k))
		}
	}
	return errs
}

// nonNegative checks durations by field name, in name order.
func nonNegative(fields map[string]time.Duration) []error {
	var errs []error
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		if d := fields[f]; d < 0 {
			errs = append(errs, fieldErr(f, "%s is negative", d))
		}
	}
	return errs
}

// kindKey names the config key of the job's kind: command, shell or http.
func (s *Spec) kindKey() string {
	switch {
	case len(s.Command) > 0:
		return "command"
	case s.Shell != "":
		return "shell"
	default:
		return "http"
	}
}

func containsAny(s, chars string) bool {
	for _, c := range s {
		for _, d := range chars {
			if c == d {
				return true
			}
		}
	}
	return false
}
