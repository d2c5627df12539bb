package jobs

import (
	"errors"
	"fmt"
	"time"
)

// Defaults for ServiceSpec fields left zero.
const (
	// DefaultStopGrace is the time between SIGTERM and SIGKILL when a
	// service's copy is stopped.
	DefaultStopGrace = 10 * time.Second
	// DefaultRestartDelay is the wait before the first restart of a copy
	// that exited; it doubles with each exit in a row.
	DefaultRestartDelay = time.Second
	// DefaultRestartMaxDelay caps the restart delay; a copy that ran this
	// long resets it.
	DefaultRestartMaxDelay = time.Minute
	// MaxStopGrace is the longest stop_grace: a successor may wait that
	// long, and the ledger carries the stop bound in milliseconds below
	// 2^20 (serviceEntry).
	MaxStopGrace = 10 * time.Minute
)

// ServiceSpec is one leader-only service as written in the config file: a
// long-running process (an application's scheduler, a singleton consumer)
// that runs on the leader only, one copy in the cluster (services.go).
type ServiceSpec struct {
	// Name identifies the service in logs, metrics, the ledger and
	// LANLEADER_SERVICE. Required, unique among services.
	Name string
	// Command is the program and its arguments, run without a shell.
	// Exactly one of Command and Shell is set.
	Command []string
	// Shell is a script run with /bin/sh -c.
	Shell string
	// Dir is the working directory; empty means lanleader's.
	Dir string
	// Env is added to lanleader's environment; the LANLEADER_* variables
	// cannot be overridden.
	Env map[string]string
	// StopGrace is the time between SIGTERM and SIGKILL of the copy's
	// whole process tree when it is stopped; zero means DefaultStopGrace.
	StopGrace time.Duration
	// RestartDelay is the wait before the first restart of a copy that
	// exited while this node leads; zero means DefaultRestartDelay.
	RestartDelay time.Duration
	// RestartMaxDelay caps the doubling restart delay; zero means
	// DefaultRestartMaxDelay.
	RestartMaxDelay time.Duration
}

// stopGrace is StopGrace, defaulted.
func (s *ServiceSpec) stopGrace() time.Duration { return orDefault(s.StopGrace, DefaultStopGrace) }

// restartDelays returns the first and the largest restart delay.
func (s *ServiceSpec) restartDelays() (first, most time.Duration) {
	first = orDefault(s.RestartDelay, DefaultRestartDelay)
	return first, max(first, orDefault(s.RestartMaxDelay, DefaultRestartMaxDelay))
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// ServiceLedgerName is the name a service's ledger entry goes by (the name
// Cluster.Commit is given), apart from any job's: "service:NAME".
func ServiceLedgerName(name string) string { return "service:" + name }

// ServiceIDOf returns the ledger id of a service's entry.
func ServiceIDOf(name string) uint64 { return JobIDOf(ServiceLedgerName(name)) }

// Validate checks s on its own. Every problem is reported as a
// *FieldError; several are joined.
func (s *ServiceSpec) Validate() error {
	var errs []error
	if s.Name == "" {
		errs = append(errs, fieldErr("name", "required"))
	}
	errs = append(errs, validateArgv(s.Command, s.Shell, "one of command (argv list) or shell (string) is required")...)
	errs = append(errs, validateEnv(s.Env)...)
	errs = append(errs, nonNegative(map[string]time.Duration{"stop_grace": s.StopGrace,
		"restart_delay": s.RestartDelay, "restart_max_delay": s.RestartMaxDelay})...)
	if s.StopGrace > MaxStopGrace {
		errs = append(errs, fieldErr("stop_grace", "%s is above the %s a copy's stop may take", s.StopGrace, MaxStopGrace))
	}
	return errors.Join(errs...)
}

// ValidateServices validates every service, checks that names are unique,
// and that no service's ledger id is a job's (jobs are the config's jobs).
func ValidateServices(specs []ServiceSpec, jobSpecs []Spec) error {
	var errs []error
	seen := map[string]int{}
	for i := range specs {
		if err := specs[i].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("services[%d] (%s): %w", i, specs[i].Name, err))
		}
		n := specs[i].Name
		if j, dup := seen[n]; dup && n != "" {
			errs = append(errs, fmt.Errorf("services[%d]: %w", i, fieldErr("name", "%q already used by services[%d]", n, j)))
		} else {
			seen[n] = i
		}
	}
	for i, spec := range specs {
		if job, clash := ServiceClashesWith(spec.Name, jobSpecs); clash {
			errs = append(errs, fmt.Errorf("services[%d]: %w", i, fieldErr("name", "%q has the ledger id of job %s; rename one", spec.Name, job)))
		}
	}
	return errors.Join(errs...)
}

// ServiceClashesWith reports whether a service called name would have the
// ledger id of one of jobSpecs (its scheduled or manual runs'), and which.
func ServiceClashesWith(name string, jobSpecs []Spec) (string, bool) {
	id := ServiceIDOf(name)
	for _, j := range jobSpecs {
		if id == JobIDOf(j.Name) || id == ManualJobIDOf(j.Name) {
			return j.Name, true
		}
	}
	return "", false
}
