package jobs

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lanleader/lanleader/internal/proc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guardedRunner returns a leading Runner whose gate lets every run through
// but, as it does, turns the guard (CanRun) to false: the leader stalled
// while the gate waited, its lease ended, and the gate still said yes.
func guardedRunner(t *testing.T, ctx context.Context, f *fakeExec, spec Spec) (*Runner, *logSink, *records) {
	t.Helper()
	var canRun atomic.Bool
	canRun.Store(true)
	gate := gateFunc(func(context.Context, string, LedgerEntry) error {
		canRun.Store(false)
		return nil
	})
	sink := &logSink{}
	recs := &records{}
	r := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{spec}, Gate: gate, OnRunFinished: recs.add,
		CanRun: canRun.Load, Logger: slog.New(sink)}, f)
	newFakeElector(ctx, "a", r.Callbacks()).lead(1)
	synctest.Wait()
	return r, sink, recs
}

// Issue 22, hole 1, in the runner: the gate opened, then the guard says
// this node may not act. A scheduled run must not exec. No attempt of the
// instant started, so it is not concluded cancelled (run by nobody) but
// decided again (refused.go): owed, asked about every guardRetry, and,
// with the guard still saying no when the next instant comes due,
// skipped with that reason and recorded refused, for the next leader to
// decide as a missed instant.
func TestRunAsksTheGuardAgainAfterTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		r, sink, recs := guardedRunner(t, ctx, f, everyMinute("m"))
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		assert.Empty(t, f.all(), "the run execs after the guard said no")
		assert.Empty(t, recs.all(), "no run: the instant is owed")
		assert.Len(t, sink.find("jobs: not starting yet: this node cannot currently act as leader; trying again until it can"), 1)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Empty(t, f.all())
		s := r.Snapshot()[0]
		assert.Equal(t, uint64(1), s.Skipped.Refused)
		assert.Equal(t, LedgerEntry{JobID: JobIDOf("m"), Instant: minute(1), Outcome: OutcomeRefused, Term: 1}, *s.Ledger,
			"refused: the next leader decides 00:01 again")
		skips := sink.find("jobs: not started: this node could not act as leader before a later instant came due")
		require.Len(t, skips, 1)
		assert.Equal(t, minute(1).UTC().String(), skips[0]["scheduled_at"])
		assert.Empty(t, recs.all())
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// The nemesis's case (brief jobunify item 4): the guard refuses a run the
// gate committed, for a moment (a lease renewed a little late). The
// instant is not lost: it starts as soon as the guard says yes, once,
// with its own LANLEADER_SCHEDULED_AT and the same ledger entry. It was
// recorded cancelled and run by nobody.
func TestARunRefusedAfterTheGateStartsOnceTheGuardSaysYes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var canRun atomic.Bool
		canRun.Store(true)
		var once sync.Once
		gate := gateFunc(func(context.Context, string, LedgerEntry) error {
			once.Do(func() {
				canRun.Store(false)
				time.AfterFunc(450*time.Millisecond, func() { canRun.Store(true) })
			})
			return nil
		})
		f := &fakeExec{}
		recs := &records{}
		r := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{everyMinute("m")}, Gate: gate, OnRunFinished: recs.add,
			CanRun: canRun.Load}, f)
		newFakeElector(ctx, "a", r.Callbacks()).lead(1)
		time.Sleep(time.Minute + 2*time.Second)
		synctest.Wait()
		calls := f.all()
		require.Len(t, calls, 1)
		assert.Equal(t, "2000-01-01T00:01:00Z", calls[0].Env["LANLEADER_SCHEDULED_AT"])
		assert.Equal(t, "1", calls[0].Env["LANLEADER_TERM"])
		assert.True(t, calls[0].At.After(minute(1).Add(450*time.Millisecond)), "late: %v", calls[0].At)
		require.Len(t, recs.all(), 1)
		assert.Equal(t, OutcomeOK, recs.all()[0].Outcome)
		s := r.Snapshot()[0]
		assert.Zero(t, s.Skipped.Refused)
		assert.Equal(t, OutcomeOK, s.Ledger.Outcome)
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// A manual run takes the same path: accepted while the guard said yes, it
// does not exec once the guard says no after the gate.
func TestManualRunAsksTheGuardAgainAfterTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		r, _, recs := guardedRunner(t, ctx, f, Spec{Name: "h", Schedule: "0 0 1 1 *", Command: []string{"/bin/true"}})
		rec, err := r.Trigger("h")
		require.NoError(t, err, "the guard said yes when the request came")
		synctest.Wait()
		assert.Empty(t, f.all(), "the manual run execs after the guard said no")
		done, ok := r.RunByID(rec.RunID)
		require.True(t, ok)
		assert.Equal(t, OutcomeCancelled, done.Outcome)
		require.Len(t, recs.all(), 1)
		assert.Contains(t, recs.all()[0].Error, "cannot currently act as leader")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// A run whose leadership ended while its gate waited does not start, even
// when this node leads again by the time the gate says yes: the guard says
// whether this node may act now, and the new leadership may, but the run
// was decided in the old one, and a leader between the two may have run
// its instant meanwhile. (udp.Commit can say yes on a context that ended:
// its select picks at random among ready cases.) on_leader_loss: finish,
// whose attempts do not run under the leadership's context, is where the
// process would otherwise start. No attempt of it started: its entry says
// refused, and the new leadership, which took the job over already,
// decides the instant again and runs it as its own (term 3), after
// checking the ledger as any start does.
func TestRunDoesNotStartInALaterLeadership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		var el *fakeElector
		var once sync.Once
		gate := gateFunc(func(context.Context, string, LedgerEntry) error {
			once.Do(func() {
				el.follow("b", 2) // deposed while the gate waited: b led term 2
				el.lead(3)        // and this node leads again
			})
			return nil
		})
		spec := everyMinute("m")
		spec.OnLeaderLoss = LeaderLossFinish
		sink := &logSink{}
		recs := &records{}
		r := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{spec}, Gate: gate, OnRunFinished: recs.add,
			Logger: slog.New(sink)}, f)
		el = newFakeElector(ctx, "a", r.Callbacks())
		el.lead(1)
		synctest.Wait()
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		calls := f.all()
		require.Len(t, calls, 1)
		assert.Equal(t, "3", calls[0].Env["LANLEADER_TERM"], "term 1's run does not exec in term 3: term 3's does")
		assert.Equal(t, "2000-01-01T00:01:00Z", calls[0].Env["LANLEADER_SCHEDULED_AT"])
		require.Len(t, recs.all(), 1)
		assert.Equal(t, uint64(3), recs.all()[0].Term)
		assert.NotEmpty(t, sink.find("jobs: not started in the leadership it was decided in, which ended; this leadership decides it again"))
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// The guard refuses a committed run and the leadership ends before it
// says yes: no attempt started, so the leader's entry says refused, and
// its successor decides the instant again as one missed in the failover
// (misfire: run-once) and runs it. It was recorded cancelled, which the
// successor took for a run that happened.
func TestARunRefusedAfterTheGateIsDecidedAgainByTheNextLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		fa, fb := &fakeExec{}, &fakeExec{}
		var canRun atomic.Bool
		canRun.Store(true)
		gate := gateFunc(func(context.Context, string, LedgerEntry) error {
			canRun.Store(false) // stalled while the gate waited: its lease ended
			return nil
		})
		a := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{everyMinute("m")}, Gate: gate, CanRun: canRun.Load}, fa)
		ea := newFakeElector(ctx, "a", a.Callbacks())
		ea.lead(1)
		logs := &logSink{}
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{everyMinute("m")}, Logger: slog.New(logs)}, fb)
		eb := newFakeElector(ctx, "b", b.Callbacks())
		eb.follow("a", 1)
		time.Sleep(time.Minute + 30*time.Second)
		synctest.Wait()
		require.NoError(t, b.AdoptLedgerFrom("a", SaysNoHolds, a.Ledger()))
		ea.follow("b", 2) // a is deposed: its loop hands 00:01 over
		synctest.Wait()
		l, err := DecodeLedger(a.Ledger())
		require.NoError(t, err)
		require.Len(t, l.Entries, 1)
		assert.Equal(t, OutcomeRefused, l.Entries[0].Outcome)
		require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, a.Ledger())) // a's LEDGER as it follows b
		eb.lead(2)
		synctest.Wait()
		assert.Empty(t, fa.all())
		calls := fb.all()
		require.Len(t, calls, 1)
		assert.Equal(t, "2000-01-01T00:01:00Z", calls[0].Env["LANLEADER_SCHEDULED_AT"])
		assert.Len(t, logs.find("jobs: instant missed during failover; running it once now (misfire: run-once)"), 1)
		cancel()
		require.NoError(t, a.Wait(context.Background()))
		require.NoError(t, b.Wait(context.Background()))
	})
}

// The shim is the last check: a run's licence counts from before the
// guard's yes, and a node that stalled past it before the exec (a pause
// of 0.3 s or more, shorter than a failover) has its shim start nothing
// ("licence ran out before the start"). Nothing of the attempt was done,
// as when the guard says no: the instant is owed again and starts once
// the node may act, not recorded failed and left run by nobody.
func TestARunItsShimRefusedIsStartedOnceTheNodeMayAct(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var n atomic.Int32
		f := &fakeExec{behave: func(context.Context, call) proc.Result {
			if n.Add(1) == 1 {
				return proc.Result{ExitCode: -1, Err: proc.ErrUnlicensed}
			}
			return proc.Result{Started: time.Now()}
		}}
		recs := &records{}
		r := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{everyMinute("m")}, OnRunFinished: recs.add}, f)
		newFakeElector(ctx, "a", r.Callbacks()).lead(1)
		time.Sleep(time.Minute + 2*time.Second)
		synctest.Wait()
		calls := f.all()
		require.Len(t, calls, 2, "the instant started again once the node may act")
		for _, c := range calls {
			assert.Equal(t, "2000-01-01T00:01:00Z", c.Env["LANLEADER_SCHEDULED_AT"])
		}
		require.Len(t, recs.all(), 1)
		assert.Equal(t, OutcomeOK, recs.all()[0].Outcome, recs.all()[0].Error)
		s := r.Snapshot()[0]
		assert.Zero(t, s.Skipped.Refused)
		assert.Equal(t, OutcomeOK, s.Ledger.Outcome)
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}
