package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/internal/proc"
)

// ignoresTerm is a process that runs for d unless stopped, and when stopped
// ignores SIGTERM: it ends only with the SIGKILL kill grace later.
func ignoresTerm(d, killGrace time.Duration) func(context.Context, call) proc.Result {
	return func(ctx context.Context, c call) proc.Result {
		select {
		case <-ctx.Done():
			time.Sleep(killGrace)
			return proc.Result{Started: c.At, Stopped: true, Killed: true, ExitCode: -1, Signal: 9}
		case <-time.After(d):
			return proc.Result{Started: c.At}
		}
	}
}

// Drain, while this node still leads, stops a cancel-policy run (kill grace
// included) and starts nothing more, even an instant that overlap: allow
// would start; only then may the elector resign.
func TestDrainCancelsBeforeResign(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{behave: ignoresTerm(time.Hour, 10*time.Second)}
		spec := everyMinute("stubborn")
		spec.Overlap = OverlapAllow
		var recs records
		r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{spec}, OnRunFinished: recs.add}, f)
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(1)
		time.Sleep(90 * time.Second) // one run, started at 1:00
		require.Len(t, f.all(), 1)

		start := time.Now()
		drained := make(chan time.Duration)
		go func() {
			assert.NoError(t, r.Drain(context.Background()))
			drained <- time.Since(start)
		}()
		took := <-drained
		assert.Equal(t, 10*time.Second, took, "SIGTERM ignored: ends with the kill grace")
		require.Len(t, recs.all(), 1)
		assert.Equal(t, OutcomeCancelled, recs.all()[0].Outcome)

		time.Sleep(5 * time.Minute) // still leading: instants come due
		synctest.Wait()
		assert.Len(t, f.all(), 1, "nothing starts while stopping")
		assert.NotZero(t, r.Snapshot()[0].Skipped.Refused)

		el.follow("n2", 2)
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// Drain waits for a finish-policy run until its context ends, then stops
// it.
func TestDrainFinish(t *testing.T) {
	for _, tt := range []struct {
		name  string
		bound time.Duration
		want  Outcome
		took  time.Duration
	}{
		{"finishes within the bound", 10 * time.Minute, OutcomeOK, 3 * time.Minute},
		{"stopped at the bound", time.Minute, OutcomeCancelled, time.Minute + 10*time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				f := &fakeExec{behave: ignoresTerm(3*time.Minute, 10*time.Second)}
				spec := everyMinute("finisher")
				spec.OnLeaderLoss = LeaderLossFinish
				var recs records
				r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{spec}, OnRunFinished: recs.add}, f)
				el := newFakeElector(ctx, "n1", r.Callbacks())
				el.lead(1)
				time.Sleep(time.Minute) // the run starts at 1:00, exactly now
				synctest.Wait()
				require.Len(t, f.all(), 1)

				start := time.Now()
				dctx, dcancel := context.WithTimeout(context.Background(), tt.bound)
				defer dcancel()
				err := r.Drain(dctx)
				assert.Equal(t, tt.want == OutcomeCancelled, err != nil, "err %v", err)
				assert.Equal(t, tt.took, time.Since(start))
				require.Len(t, recs.all(), 1)
				assert.Equal(t, tt.want, recs.all()[0].Outcome)
				assert.Len(t, f.all(), 1)

				el.follow("n2", 2)
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}
