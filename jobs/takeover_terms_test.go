package jobs

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two runs of one instant under different terms, with a hold on the older
// (the takeover boundary of issue 22, item 11). a (term 1) ran 00:01:00
// and, deposed, still runs it (finish) and says so; b (term 2) took a's
// run for gone, ran 00:01:00 again, and then vanished. c takes over
// (term 3) hearing both: b's newer entry, running, and a's hold on the
// older run. b's run is concluded interrupted; 00:01:00 is not started a
// third time beside a's run of it, under overlap skip or allow: it is
// going on a. With skip c starts the job again only once a's run has
// ended. a's outcome is what the history keeps of its run. Before, c
// reran 00:01:00 at the end of its gathering window, beside a's run.
func TestTakeoverOfTwoRunsOfOneInstantHoldsTheOlder(t *testing.T) {
	for _, overlap := range []Overlap{OverlapSkip, OverlapAllow} {
		t.Run(overlap.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				spec := Spec{Name: "m", Schedule: "* * * * *", Shell: "x", Overlap: overlap,
					OnLeaderLoss: LeaderLossFinish, RerunInterrupted: true}
				f, logs := &fakeExec{behave: sleepFor(150*time.Second, 0)}, &logSink{}
				c := newTestRunnerCfg(t, testConfig{Node: "c", Jobs: []Spec{spec}, Gather: 5 * time.Second,
					HoldLapse: holdLapseForTest, Logger: slog.New(logs)}, f)
				ec := newFakeElector(ctx, "c", c.Callbacks())
				ec.follow("b", 2)
				instant := minute(1)
				aRun := LedgerEntry{JobID: JobIDOf("m"), Instant: instant, Outcome: OutcomeRunning, Term: 1}
				bRun := aRun
				bRun.Term = 2
				time.Sleep(instant.Sub(time.Now()) + 20*time.Second)
				require.NoError(t, c.AdoptLedgerFrom("b", HoldsNothing, Ledger{Entries: []LedgerEntry{bRun}}.Encode()))
				var wg sync.WaitGroup
				wg.Go(func() { // a holds its run until 00:03:30, then sends its outcome
					held := aRun
					held.Held = true // a runs it
					for ctx.Err() == nil && time.Now().Before(minute(3).Add(30*time.Second)) {
						require.NoError(t, c.AdoptLedgerFrom("a", HoldsMarked, Ledger{Entries: []LedgerEntry{held}}.Encode()))
						time.Sleep(time.Second)
					}
					ok := aRun
					ok.Outcome = OutcomeOK
					require.NoError(t, c.AdoptLedgerFrom("a", HoldsNothing, Ledger{Entries: []LedgerEntry{ok}}.Encode()))
				})
				time.Sleep(10 * time.Second)
				ec.lead(3) // 00:01:30
				time.Sleep(minute(3).Add(20 * time.Second).Sub(time.Now()))
				synctest.Wait()
				if overlap == OverlapSkip {
					assert.Empty(t, f.scheduled("m"), "nothing started while a's run of 00:01:00 went on")
					_, err := c.Trigger("m")
					assert.ErrorIs(t, err, ErrOverlap)
				}
				time.Sleep(minute(4).Add(time.Second).Sub(time.Now()))
				synctest.Wait()

				scheduled := f.scheduled("m")
				assert.NotContains(t, scheduled, "2000-01-01T00:01:00Z", "00:01:00 never started a third time")
				assert.Contains(t, scheduled, "2000-01-01T00:04:00Z", "the job goes on after a's run")
				byTerm := map[uint64]Outcome{}
				for _, rec := range c.History().Runs("m", 10) {
					if !rec.Manual && rec.ScheduledAt.Equal(instant) {
						byTerm[rec.Term] = rec.Outcome
					}
				}
				assert.Equal(t, map[uint64]Outcome{1: OutcomeOK, 2: OutcomeInterrupted}, byTerm)
				held := "jobs: not starting: previous run still going on another node (overlap: skip)"
				if overlap == OverlapAllow {
					held = "jobs: not running it again: this instant is still going on another node"
				}
				if refused := logs.find(held); assert.NotEmpty(t, refused) {
					assert.Equal(t, instant.String(), refused[0]["scheduled_at"], "the rerun is what was refused first")
					assert.Equal(t, "a", refused[0]["node"])
				}
				cancel()
				wg.Wait()
				require.NoError(t, c.Wait(context.Background()))
			})
		})
	}
}
