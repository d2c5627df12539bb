package jobs

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

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
// this node may not act. A scheduled run must not exec: it is refused,
// counted, logged and recorded cancelled.
func TestRunAsksTheGuardAgainAfterTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		r, sink, recs := guardedRunner(t, ctx, f, everyMinute("m"))
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		assert.Empty(t, f.all(), "the run execs after the guard said no")
		s := r.Snapshot()[0]
		assert.Equal(t, uint64(1), s.Skipped.Refused)
		assert.Equal(t, OutcomeCancelled, s.Ledger.Outcome)
		require.Len(t, recs.all(), 1)
		assert.Contains(t, recs.all()[0].Error, "cannot currently act as leader")
		assert.NotEmpty(t, sink.find("jobs: not starting: this node cannot currently act as leader"))
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
// process would otherwise start.
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
		assert.Empty(t, f.all(), "term 1's run execs in term 3")
		s := r.Snapshot()[0]
		assert.Equal(t, uint64(1), s.Skipped.Refused)
		require.Len(t, recs.all(), 1)
		assert.Equal(t, OutcomeCancelled, recs.all()[0].Outcome)
		assert.Contains(t, recs.all()[0].Error, "the leadership it was decided in ended")
		assert.NotEmpty(t, sink.find("jobs: not starting: the leadership it was decided in ended (or the job was removed)"))
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}
