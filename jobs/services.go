package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/lanleader/lanleader/internal/proc"
)

// Leader-only services. A service is one long-running process that runs on
// the leader only, one copy in the cluster at a time: each leadership
// supervises its own copy (supervise), started when this node may act,
// restarted with a doubling delay when it exits, stopped (SIGTERM, then
// SIGKILL of its whole tree after stop_grace) when the leadership ends, the
// service is removed, or lanleader stops.
//
// Never two copies at once, where the mode bounds a deposed leader
// (election.Succession; udp quorum mode): a leadership starts its copy
// only once the previous copy is known stopped or can no longer be
// running (startAtLocked). The previous copy is known from the ledger: each
// leadership records its copy running under its term before starting it
// (through Cluster.Commit, so a majority knows in quorum mode) and stopped
// once it is gone; the entry of the highest term is the last copy. One
// recorded running, under another term, can no longer be running once
// its leader has stopped acting (the successor's start plus the mode's
// overhang) and then its licence, its stop grace and the kill are over
// (serviceStop): the copy's shim stops it on its own when its licence is
// not renewed (proc.Licence), which only a leader that may act does, so
// this holds for a leader that is stopped, paused or dead as well as for
// one that stepped down. Where nothing bounds a deposed leader (no quorum,
// static, env), a new leadership starts its copy at once, as jobs
// conclude a previous leader's run at once there.

// serviceInstant is the base of every service ledger entry's Instant, far
// enough that no scheduled instant reaches it: a far instant also keeps
// the entries first in a ledger that must be truncated (Ledger.Encode keeps
// the latest instants).
var serviceInstant = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// serviceEntry is a service's ledger entry: copy gen of the leadership of
// term, running or stopped (OutcomeOK), and stop, how long after its
// leader stops acting that copy can still be running (serviceStop of the
// leader's own spec). A successor waits by this bound, not by its own
// stop_grace, which a rolling change may have made shorter. gen numbers
// the supervisors of one leadership (a reload that changes or re-adds the
// service starts another), so that a later copy's "running" is newer than
// an earlier one's "stopped". Both ride in Instant, which has no other use
// here: serviceInstant plus gen × 2^20 + the bound in milliseconds,
// counted as seconds (the ledger keeps whole seconds). Entries of one
// service are ordered by term, then Instant, then progress (newer).
func serviceEntry(id, term, gen uint64, outcome Outcome, stop time.Duration) LedgerEntry {
	ms := uint64(min((stop+time.Millisecond-1)/time.Millisecond, maxServiceStopMillis))
	// In seconds since the epoch: gen × 2^20 s outgrows a time.Duration
	// (292 years) past gen 8796.
	secs := serviceInstant.Unix() + int64(gen<<20|ms)
	return LedgerEntry{JobID: id, Instant: time.Unix(secs, 0).UTC(), Outcome: outcome, Term: term}
}

// maxServiceStopMillis is the largest stop bound an entry carries (17 min:
// ServiceSpec.Validate keeps stop_grace below it).
const maxServiceStopMillis = 1<<20 - 1

// isServiceEntry reports whether e is a service's entry (serviceEntry).
func isServiceEntry(e LedgerEntry) bool { return !e.Instant.Before(serviceInstant) }

// serviceStopOf returns the stop bound a service entry carries.
func serviceStopOf(e LedgerEntry) time.Duration {
	secs := uint64(e.Instant.Unix() - serviceInstant.Unix())
	return time.Duration(secs&maxServiceStopMillis) * time.Millisecond
}

// ServiceState is what a service's supervisor on this node is doing.
type ServiceState string

// The states of a service on one node.
const (
	// ServiceIdle: this node does not lead; it runs no copy.
	ServiceIdle ServiceState = "idle"
	// ServiceWaiting: this node leads; the previous copy may still be
	// running (or this node may not act yet).
	ServiceWaiting ServiceState = "waiting"
	// ServiceRunning: this node's copy runs.
	ServiceRunning ServiceState = "running"
	// ServiceRestarting: the copy exited; it starts again after a delay.
	ServiceRestarting ServiceState = "restarting"
	// ServiceStopping: the copy was told to stop (SIGTERM) and has not
	// exited yet.
	ServiceStopping ServiceState = "stopping"
)

// service is a ServiceSpec and its supervisor's state on this node
// (guarded by Runner.mu).
type service struct {
	spec ServiceSpec
	id   uint64

	state    ServiceState
	since    time.Time // when state was entered
	pid      int       // the copy's process group, 0 when none runs
	term     uint64    // the leadership of the current supervisor
	restarts uint64    // exits of copies on this node, all leaderships
	lastExit string    // how the last copy ended
	next     time.Time // when a waiting or restarting copy may start
	waitWhy  string    // why it waits

	// stop ends the current supervisor (a reload changed or removed the
	// service); done is closed once it has ended, its copy gone.
	stop context.CancelFunc
	done chan struct{}
	// wake tells a waiting supervisor that a ledger was heard.
	wake chan struct{}
}

func newService(spec ServiceSpec) *service {
	return &service{spec: spec, id: ServiceIDOf(spec.Name), state: ServiceIdle, wake: make(chan struct{}, 1)}
}

// setState records what the supervisor does now. Must hold r.mu.
func (sv *service) setState(s ServiceState, now time.Time) {
	if sv.state != s {
		sv.state, sv.since = s, now
	}
}

// serviceStop is how long after its leader stops acting a copy of spec can
// still be running, by its leader's clock (the bound its entry carries;
// a successor counts it longer, election.Succession.QuietAt): its licence
// (the shim sends SIGTERM when it runs out), its stop grace (then SIGKILL
// of its tree), and the kill itself.
func serviceStop(spec *ServiceSpec) time.Duration {
	return Licence + procExecutor{}.stopTime(spec.stopGrace())
}

// startAtLocked returns when the leadership of term, started at since, may
// start its copy of sv, and why it waits until then (empty: it need not).
// Must hold r.mu.
func (r *Runner) startAtLocked(sv *service, term uint64, since time.Time) (time.Time, string) {
	e, ok := r.newestByID(sv.id)
	if !ok || e.Outcome != OutcomeRunning || e.Term == term {
		return since, "" // none recorded running, or it is this leadership's own
	}
	node := r.leaderOfLocked(e.Term)
	mine := node == r.cfg.Node // one of this process is waited for (supervise)
	quiet, bounded := quietAt(r.timing.Succession, since, mine, stopOf(e, StopBound{}))
	switch {
	case !bounded:
		return since, ""
	case mine:
		return quiet, fmt.Sprintf("this node's copy of term %d, from before its restart, is being killed", e.Term)
	case node == "":
		node = "an earlier leader"
	}
	return quiet, fmt.Sprintf("the copy %s started under term %d may still be running", node, e.Term)
}

// recordServiceLocked makes outcome (running or stopped) of copy gen under
// term sv's entry in this node's ledger, unless a newer one is there, and
// publishes it. Must hold r.mu.
func (r *Runner) recordServiceLocked(sv *service, term, gen uint64, outcome Outcome) LedgerEntry {
	e := serviceEntry(sv.id, term, gen, outcome, serviceStop(&sv.spec))
	r.setOwn(e)
	r.ledgerChanged()
	return e
}

// wakeServicesLocked tells waiting supervisors that a ledger was heard.
// Must hold r.mu.
func (r *Runner) wakeServicesLocked() {
	for _, sv := range r.services {
		select {
		case sv.wake <- struct{}{}:
		default:
		}
	}
}

// startSupervisorLocked starts sv's supervisor for the leadership of term
// (ctx), which started at since. The previous supervisor, if any, is ended
// first; the new one waits for its copy to be gone. Must hold r.mu, with
// r.closed false.
func (r *Runner) startSupervisorLocked(ctx context.Context, term uint64, sv *service, since time.Time) {
	if sv.stop != nil {
		sv.stop()
	}
	prev := sv.done
	sctx, stop := context.WithCancel(ctx)
	sv.stop, sv.done, sv.term = stop, make(chan struct{}), term
	sv.setState(ServiceWaiting, time.Now())
	if r.serviceGenTerm != term {
		r.serviceGen, r.serviceGenTerm = 0, term
	}
	r.serviceGen++
	r.wg.Add(1)
	go r.supervise(sctx, term, r.serviceGen, sv, sv.spec, since, prev, sv.done)
}

// supervise runs sv's copy for one leadership (term, started at since)
// until ctx ends, as its supervisor gen (serviceEntry): it waits for the
// previous copy (prev: this process's, then startAtLocked), then starts
// the copy, restarts it when it exits, and stops it at the end. done is
// closed once the copy is gone.
func (r *Runner) supervise(ctx context.Context, term, gen uint64, sv *service, spec ServiceSpec, since time.Time, prev, done chan struct{}) {
	defer r.wg.Done()
	defer close(done)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.drainCtx, cancel)() // lanleader stops: the copy stops, none starts
	log := r.log.With("service", spec.Name, "term", term)
	defer func() {
		if p := recover(); p != nil {
			log.Error("services: supervisor panicked; the service stops until the next leadership",
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	if prev != nil {
		select {
		case <-prev:
		case <-ctx.Done():
		}
	}
	cp := copyRecord{gen: gen}
	defer func() {
		r.mu.Lock()
		if cp.recorded {
			r.recordServiceLocked(sv, term, gen, OutcomeOK) // this supervisor's copy is gone
		}
		if sv.done == done {
			sv.setState(ServiceIdle, time.Now())
			sv.next, sv.waitWhy = time.Time{}, ""
		}
		r.unlock()
	}()
	if !r.awaitPrevious(ctx, sv, term, since, log) {
		return
	}
	first, most := spec.restartDelays()
	delay := first
	for {
		ran, ok := r.runCopy(ctx, sv, spec, term, &cp, log)
		switch {
		case ctx.Err() != nil:
			return
		case !ok: // none started: look again soon
			if !sleepCtx(ctx, Licence/5) {
				return
			}
			continue
		case ran >= most:
			delay = first // it ran a while: this exit is not part of a loop
		}
		r.mu.Lock()
		sv.setState(ServiceRestarting, time.Now())
		sv.next = time.Now().Add(delay)
		r.unlock()
		if !sleepCtx(ctx, delay) {
			return
		}
		delay = min(2*delay, most)
	}
}

// copyRecord is what a leadership has recorded of its copies: running in
// its ledger (recorded: stopped must follow at the end), and in the
// cluster (committed, through Cluster.Commit).
type copyRecord struct {
	gen                 uint64
	recorded, committed bool
}

// awaitPrevious waits until the leadership of term (started at since) may
// start its copy: after the gathering window (the ledgers that tell of the
// previous copy arrive meanwhile), until startAtLocked says so, looking
// again whenever a ledger is heard. It returns false if ctx ended first.
func (r *Runner) awaitPrevious(ctx context.Context, sv *service, term uint64, since time.Time, log *slog.Logger) bool {
	r.mu.Lock()
	gather := r.gatherUntil
	r.unlock()
	if !sleepCtx(ctx, time.Until(gather)) {
		return false
	}
	logged := ""
	for {
		now := time.Now()
		r.mu.Lock()
		at, why := r.startAtLocked(sv, term, since)
		sv.next, sv.waitWhy = at, why
		r.unlock()
		if !at.After(now) {
			return true
		}
		if why != logged {
			log.Info("services: waiting before starting this node's copy", "why", why, "until", at)
			logged = why
		}
		t := time.NewTimer(at.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-sv.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// runCopy starts one copy and waits for it to end: once this node may act
// (asked again after the gate), recorded running in the cluster first
// (the first copy of the leadership), under a licence renewed while this
// node may act. It returns how long the copy ran, and false if none
// started.
func (r *Runner) runCopy(ctx context.Context, sv *service, spec ServiceSpec, term uint64, cp *copyRecord, log *slog.Logger) (time.Duration, bool) {
	if !r.awaitMayAct(ctx, sv) {
		return 0, false
	}
	if !cp.committed {
		r.mu.Lock()
		e := r.recordServiceLocked(sv, term, cp.gen, OutcomeRunning)
		cp.recorded = true
		r.unlock()
		if err := r.cluster.Commit(ctx, ServiceLedgerName(spec.Name), e); err != nil {
			log.Warn("services: not starting: could not record the copy in the cluster first", "err", err)
			return 0, false
		}
		cp.committed = true
	}
	boot := r.bootNow() // before the check: a stall after it renews nothing
	if !r.mayAct() {
		log.Warn("services: not starting: this node cannot currently act as leader")
		return 0, false
	}
	lic := proc.NewLicence(boot + Licence)
	r.mu.Lock()
	if ctx.Err() != nil || r.closed || r.draining {
		r.unlock()
		return 0, false
	}
	r.workStartedLocked()
	r.runs.Add(1)
	r.unlock()
	copyCtx, stopCopy := context.WithCancel(ctx)
	defer stopCopy()
	defer context.AfterFunc(copyCtx, func() {
		r.mu.Lock()
		if sv.pid != 0 {
			sv.setState(ServiceStopping, time.Now())
		}
		r.unlock()
	})()
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		r.renewLicence(copyCtx, lic)
	}()
	begin := time.Now()
	var tail outputTail
	log.Info("services: starting", "command", spec.Command, "shell", spec.Shell)
	res := r.exec(copyCtx, proc.Spec{
		Argv:      serviceArgv(&spec),
		Dir:       spec.Dir,
		Env:       processEnv(r.environ(), spec.Env, r.serviceIdentity(&spec, term)),
		KillGrace: spec.stopGrace(),
		Licence:   lic,
		OnStart: func(pgid int) {
			r.mu.Lock()
			sv.pid = pgid
			sv.setState(ServiceRunning, time.Now())
			r.unlock()
			log.Info("services: running", "pid", pgid)
		},
		OnLine: func(s proc.Stream, line string, partial bool) {
			tail.add(line)
			log.Info("services: output", "stream", string(s), "line", line, "partial", partial)
		},
	})
	stopCopy()
	<-renewed
	ran := time.Since(begin)
	stopping := ctx.Err() != nil
	// Unlicensed: nothing of the copy ran, so it is no exit (no restart,
	// no on_service_exit, the last exit kept); it starts again once this
	// node may act.
	unlicensed := errors.Is(res.Err, proc.ErrUnlicensed)
	r.mu.Lock()
	sv.pid = 0
	if !unlicensed {
		sv.lastExit = res.String()
	}
	expired := res.Expired && !stopping
	if expired {
		sv.lastExit += " (stopped by its shim: its licence ran out)"
	}
	if !stopping && !expired && !unlicensed {
		sv.restarts++
	}
	exit := ServiceExit{Service: spec.Name, Term: term, Result: sv.lastExit, ExitCode: res.ExitCode, Ran: ran,
		Restarts: sv.restarts, Output: tail.lines()}
	if stopping && cp.recorded {
		// The supervisor ends with this copy: recorded stopped before the
		// run counts as ended, so Drain returns with it in the ledger,
		// which the daemon writes back before it resigns.
		r.recordServiceLocked(sv, term, cp.gen, OutcomeOK)
		cp.recorded = false
	}
	r.runEndedLocked()
	r.unlock()
	r.runs.Done()
	attrs := []any{"result", exit.Result, "ran", ran.Round(time.Millisecond), "stopped", res.Stopped, "killed", res.Killed}
	switch {
	case stopping:
		log.Info("services: stopped", attrs...)
		return ran, true
	case unlicensed:
		log.Warn("services: not started: " + unlicensedWhy)
		return 0, false
	case expired:
		// Not the copy's doing: this node went too long without being
		// able to say it may act (stalled, paused). It starts again only
		// once this node may act.
		log.Warn("services: stopped by its shim: this node could not act as leader for the licence's length", attrs...)
		return ran, true
	}
	log.Warn("services: exited while leading; restarting", attrs...)
	if r.cfg.OnServiceExit != nil {
		r.cfg.OnServiceExit(exit)
	}
	return ran, true
}

// awaitMayAct waits, checking every Licence/5, until this node may
// act (MayAct): a leader whose standing is not confirmed yet starts
// nothing. It returns false if ctx ended first.
func (r *Runner) awaitMayAct(ctx context.Context, sv *service) bool {
	for !r.MayAct() {
		r.mu.Lock()
		sv.setState(ServiceWaiting, time.Now())
		sv.waitWhy = "this node cannot currently act as leader"
		r.unlock()
		if !sleepCtx(ctx, Licence/5) {
			return false
		}
	}
	return true
}

// serviceArgv is the argv of spec's process.
func serviceArgv(spec *ServiceSpec) []string {
	if len(spec.Command) > 0 {
		return spec.Command
	}
	return []string{"/bin/sh", "-c", spec.Shell}
}

// serviceIdentity is what a copy is told about itself: LANLEADER_SERVICE,
// LANLEADER_TERM (its fencing token), LANLEADER_NODE.
func (r *Runner) serviceIdentity(spec *ServiceSpec, term uint64) []identityVar {
	return []identityVar{{"SERVICE", spec.Name}, {"TERM", fmt.Sprint(term)}, {"NODE", r.cfg.Node}}
}

// ServiceExit is a copy's exit while its node led (RunnerConfig.OnServiceExit).
type ServiceExit struct {
	// Service is the service's name.
	Service string
	// Term is the leadership the copy ran under.
	Term uint64
	// Result says how it ended ("exit 3", "signal killed").
	Result string
	// ExitCode is its exit status; -1 if killed by a signal or it could
	// not start.
	ExitCode int
	// Ran is how long it ran.
	Ran time.Duration
	// Restarts counts the exits of the service's copies on this node so
	// far, this one included.
	Restarts uint64
	// Output holds the last lines (at most OutputTailLines) it printed.
	Output []string
}
