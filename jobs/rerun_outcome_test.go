package jobs

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// b takes over at 00:01:20 and finds 00:01 running under a's term, nobody
// holding it: interrupted, rerun (rerun_interrupted). The guard refuses the
// rerun for a moment (a lease being renewed); meanwhile a's outcome of
// 00:01 arrives (it was only cut off, and it finished). The rerun is then
// a second run of an instant known to have run to its end.
func TestRerunNotStartedOnceTheOutcomeIsHeard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := everyMinute("m")
		spec.RerunInterrupted = true
		f := &fakeExec{}
		logs := &logSink{}
		takeover := minute(1).Add(20 * time.Second)
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Logger: slog.New(logs),
			CanRun: refusing(takeover, takeover.Add(2*time.Second))}, f)
		require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, ledgerOf("m", minute(1), OutcomeRunning, 1)))
		time.Sleep(takeover.Sub(time.Now()))
		newFakeElector(ctx, "b", b.Callbacks()).lead(2)
		time.Sleep(time.Second)
		require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, ledgerOf("m", minute(1), OutcomeOK, 1)))
		time.Sleep(5 * time.Second)
		synctest.Wait()

		assert.Empty(t, f.scheduled("m"), "00:01 ended ok on a: not run again")
		s := b.Snapshot()[0]
		assert.Equal(t, OutcomeOK, s.Ledger.Outcome)
		assert.Equal(t, uint64(1), s.Skipped.AlreadyStarted, "counted")
		assert.Len(t, logs.find("jobs: not running it again: its run ended after all (outcome heard)"), 1)
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}
