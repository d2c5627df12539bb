package jobs

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMayActIsTheStartCheck: MayAct is true exactly when an instant due
// now would start: leading, the guard says yes, not stopping. Each time it
// says no, the next instant is not started either.
func TestMayActIsTheStartCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var guard atomic.Bool
		guard.Store(true)
		f := &fakeExec{}
		r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{everyMinute("m")}, CanRun: guard.Load}, f)
		el := newFakeElector(ctx, "n1", r.Callbacks())
		runsIn := func(d time.Duration) int {
			before := len(f.all())
			time.Sleep(d)
			synctest.Wait()
			return len(f.all()) - before
		}

		assert.False(t, r.MayAct(), "not leading")
		el.lead(2)
		assert.True(t, r.MayAct(), "leading, guard yes")
		assert.Equal(t, 1, runsIn(time.Minute))

		guard.Store(false) // paused, lease lost
		assert.False(t, r.MayAct(), "the guard says no")
		assert.Zero(t, runsIn(time.Minute))
		assert.Zero(t, r.Snapshot()[0].Skipped.Refused, "00:02 waits for the guard, not counted yet")

		guard.Store(true)
		assert.True(t, r.MayAct())
		require.NoError(t, r.Drain(context.Background()))
		assert.False(t, r.MayAct(), "stopping")
		assert.Zero(t, runsIn(time.Minute))
		assert.Equal(t, uint64(2), r.Snapshot()[0].Skipped.Refused, "00:02 and 00:03, refused as stopping")

		el.follow("n2", 3)
		assert.False(t, r.MayAct(), "following")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}
