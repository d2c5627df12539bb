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

// b leads m (every minute). At 00:00:59.5 the ledger of a, deposed but
// with a clock half a second ahead, says it started 00:01 (term 1); then a
// stale follower's truncated LEDGER arrives that leaves m out. Absence from
// a truncated ledger says nothing: b must still know 00:01 started and not
// start it again.
func TestTruncatedLedgerDoesNotEraseAStartedInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := &fakeExec{}
		logs := &logSink{}
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{everyMinute("m"), everyMinute("other")},
			Logger: slog.New(logs)}, f)
		newFakeElector(ctx, "b", b.Callbacks()).lead(2)
		time.Sleep(59*time.Second + 500*time.Millisecond)
		require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, ledgerOf("m", minute(1), OutcomeRunning, 1)))
		stale := Ledger{Entries: []LedgerEntry{{JobID: JobIDOf("other"), Instant: minute(0), Outcome: OutcomeOK, Term: 1}}, Truncated: true}
		require.NoError(t, b.AdoptLedgerFrom("c", HoldsNothing, stale.Encode()))
		time.Sleep(time.Second)
		synctest.Wait()

		assert.Empty(t, f.scheduled("m"), "00:01 started on a: not again")
		assert.Equal(t, uint64(1), b.Snapshot()[0].Skipped.AlreadyStarted)
		assert.Len(t, logs.find("jobs: not starting: this or a later instant already started"), 1)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"2000-01-01T00:02:00Z"}, f.scheduled("m"), "the schedule goes on")
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}

// b heard a's full ledger (m ran 00:00), then a truncated LEDGER that
// leaves m out, and takes over at 00:03:20. What the last leader did with m
// is unknown, so b starts it cold (docs/jobs.md, Size limit): 00:01 to
// 00:03 are not run. They must not vanish without a word: every instant is
// started or skipped with a logged reason, and counted.
func TestTruncatedColdStartSaysWhatItSkips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := &fakeExec{}
		logs := &logSink{}
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{everyMinute("m"), everyMinute("other")},
			Logger: slog.New(logs)}, f)
		require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, ledgerOf("m", minute(0), OutcomeOK, 1)))
		stale := Ledger{Entries: []LedgerEntry{{JobID: JobIDOf("other"), Instant: minute(0), Outcome: OutcomeOK, Term: 1}}, Truncated: true}
		require.NoError(t, b.AdoptLedgerFrom("c", HoldsNothing, stale.Encode()))
		time.Sleep(minute(3).Add(20 * time.Second).Sub(time.Now()))
		newFakeElector(ctx, "b", b.Callbacks()).lead(2)
		time.Sleep(time.Minute)
		synctest.Wait()

		assert.Equal(t, []string{"2000-01-01T00:04:00Z"}, f.scheduled("m"), "cold: nothing before the takeover")
		s := b.Snapshot()[0]
		assert.Equal(t, uint64(3), s.Skipped.Misfired, "00:01, 00:02 and 00:03 counted")
		if l := logs.find("jobs: instants missed during failover; not run: a truncated ledger left this job out, so what the last leader ran is unknown"); assert.Len(t, l, 1) {
			assert.Equal(t, "m", l[0]["job"])
			assert.Equal(t, "2000-01-01 00:01:00 +0000 UTC", l[0]["from"])
			assert.Equal(t, "2000-01-01 00:03:00 +0000 UTC", l[0]["scheduled_at"])
		}
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}
