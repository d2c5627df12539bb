package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/internal/proc"
)

// An executor performs one attempt of a job of its kind: a process
// (command, shell: procExecutor) or a request (http: httpExecutor). The
// Runner's attempt does what every kind shares around it (the timeout, the
// start and end log lines, the output tail), so the checks made before an
// attempt and what is made of its end (retries, outcome, history, metrics,
// failure hooks) are the same for every kind.
type executor interface {
	execute(ctx context.Context, a *attemptCall) attemptResult
	// stopTime is how long an attempt can go on once its ctx ended or
	// its licence ran out, with killGrace between SIGTERM and SIGKILL
	// (quiet.go).
	stopTime(killGrace time.Duration) time.Duration
	// licensed reports whether its attempts run under a licence
	// (licence.go).
	licensed() bool
}

// attemptCall is one attempt as an executor gets it.
type attemptCall struct {
	spec *Spec
	rec  *RunRecord
	// identity is what the run is told about itself (runIdentity).
	identity []identityVar
	// env is a process's environment (runEnv).
	env []string
	// killGrace is the time between SIGTERM and SIGKILL of a process.
	killGrace time.Duration
	// licence bounds a process's life from outside lanleader (licence.go);
	// nil if none.
	licence *proc.Licence
	// output receives each line the attempt printed (a process's stdout
	// and stderr, a response's body), partial as proc.Spec.OnLine says.
	output func(stream string, line string, partial bool)
	// mayStart is the start check (Runner.mayStart: "" if this node may
	// still act in the run's leadership), for an executor whose act comes
	// well after the attempt begins: a request goes out only once its
	// connection is made.
	mayStart func() string
}

// attemptResult is how one attempt ended, whatever its kind.
type attemptResult struct {
	// OK: the process exited 0, or the response's status is accepted.
	OK bool
	// Code is the process's exit status or the response's status code;
	// -1 when there is none (killed by a signal, could not start, no
	// response). RunRecord.ExitCode keeps it.
	Code int
	// Stopped: ctx ended before the attempt did (the process group was
	// signalled, the request aborted).
	Stopped bool
	// Expired: the attempt's licence ran out while it went on, so its shim
	// stopped it (licence.go).
	Expired bool
	// What says how it ended, for logs and RunRecord.Error: "exit 3",
	// "signal killed", "HTTP 503 Service Unavailable (accept: 2xx)", a
	// start or transport error.
	What string
	// Duration is from the attempt's start to its end.
	Duration time.Duration
	// Refused says why the attempt did nothing: mayStart said no right
	// before it would have acted. Empty when it acted.
	Refused string
}

// executorFor returns the executor of spec's kind.
func (r *Runner) executorFor(spec *Spec) executor {
	if spec.HTTP != nil {
		return httpExecutor{transport: r.httpTransport, dial: r.httpDial}
	}
	return procExecutor{run: r.exec}
}

// executorKind returns an executor of spec's kind that runs nothing: what
// the job rules ask of a kind (its stop time), not how it runs.
func executorKind(spec *Spec) executor {
	if spec.HTTP != nil {
		return httpExecutor{}
	}
	return procExecutor{}
}

// procExecutor runs a command or shell job's process (proc.Run, replaced
// in tests).
type procExecutor struct {
	run func(context.Context, proc.Spec) proc.Result
}

// stopTime: SIGTERM, SIGKILL killGrace later, and the processes gone
// within proc.LicenceKillSettle after that: the shim's doing once the
// licence ran out, which it does by itself; lanleader's own stop, when ctx
// ends, only comes sooner.
func (p procExecutor) stopTime(killGrace time.Duration) time.Duration {
	return killGrace + proc.LicenceKillSettle
}

func (p procExecutor) licensed() bool { return true }

func (p procExecutor) execute(ctx context.Context, a *attemptCall) attemptResult {
	argv := a.spec.Command
	if len(argv) == 0 {
		argv = []string{"/bin/sh", "-c", a.spec.Shell}
	}
	res := p.run(ctx, proc.Spec{
		Argv:      argv,
		Dir:       a.spec.Dir,
		Env:       a.env,
		KillGrace: a.killGrace,
		Licence:   a.licence,
		OnLine: func(s proc.Stream, line string, partial bool) {
			a.output(string(s), line, partial)
		},
	})
	out := attemptResult{OK: res.OK(), Code: res.ExitCode, Stopped: res.Stopped, Expired: res.Expired,
		What: res.String(), Duration: res.Duration}
	if errors.Is(res.Err, proc.ErrUnlicensed) {
		// The shim's own last check: nothing of the attempt ran.
		out.Refused = unlicensedWhy
	}
	return out
}

// identityVar is one thing a run is told about itself: a process as
// LANLEADER_<Name>, a request as the header Lanleader-<Name> (words
// capitalised: Lanleader-Scheduled-At).
type identityVar struct {
	Name, Value string
}

// runIdentity is what a run is told about itself, the same for every kind.
func (r *Runner) runIdentity(spec *Spec, rec *RunRecord) []identityVar {
	return []identityVar{
		{"JOB", spec.Name},
		{"TERM", strconv.FormatUint(rec.Term, 10)},
		{"NODE", r.cfg.Node},
		{"SCHEDULED_AT", rec.ScheduledAt.UTC().Format(time.RFC3339)},
		{"RUN_ID", rec.RunID},
		{"ATTEMPT", strconv.Itoa(rec.Attempt)},
		{"TRIGGER", rec.trigger()},
	}
}

// envName is v as an environment variable: LANLEADER_SCHEDULED_AT.
func (v identityVar) envName() string { return "LANLEADER_" + v.Name }

// headerName is v as a request header: Lanleader-Scheduled-At.
func (v identityVar) headerName() string {
	words := strings.Split(strings.ToLower(v.Name), "_")
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return identityHeaderPrefix + strings.Join(words, "-")
}

// IdempotencyKey is the Idempotency-Key header of a run's requests, the same
// for all its attempts and for the rerun of an interrupted instant by
// another leader: "<job>@<scheduled instant, RFC 3339 UTC>", or for a manual
// run, which has no instant of its own, "<job>@manual:<run id>". An
// application that remembers the keys it has done does each instant once.
func IdempotencyKey(rec RunRecord) string {
	if rec.Manual {
		return fmt.Sprintf("%s@manual:%s", rec.Job, rec.RunID)
	}
	return rec.Job + "@" + rec.ScheduledAt.UTC().Format(time.RFC3339)
}
