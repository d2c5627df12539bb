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

// b takes over (term 2) while a, deposed, holds a run of m; within b's
// gathering window a says it no longer runs it (a restarted), so b's
// takeover concludes the run interrupted. It records the release then, as
// lapse does: a stale marked copy of a's ledger heard later (relayed or
// delayed) makes no new hold that would refuse triggers and skip instants,
// even when b's loop does not get to record it (here b cannot act as
// leader for that moment; otherwise the loop's lapse races the copy).
func TestTakeoverRecordsTheReleaseOfARunItConcludes(t *testing.T) {
	for _, manual := range []bool{false, true} {
		t.Run(map[bool]string{false: "scheduled", true: "manual"}[manual], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				run := LedgerEntry{JobID: JobIDOf("m"), Instant: minute(0), Outcome: OutcomeRunning, Term: 1, Held: true} // a runs it
				if manual {
					run.JobID, run.Instant = ManualJobIDOf("m"), minute(0).Add(10*time.Second)
				}
				ledger := Ledger{Entries: []LedgerEntry{run}}.Encode()
				var cannot atomic.Bool
				b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{{Name: "m", Schedule: "0 * * * *", Shell: "x"}},
					Gather: 5 * time.Second, HoldLapse: holdLapseForTest,
					CanRun: func() bool { return !cannot.Load() }}, &fakeExec{})
				eb := newFakeElector(ctx, "b", b.Callbacks())
				eb.follow("a", 1)
				time.Sleep(10 * time.Second)
				require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, ledger)) // a's heartbeat as leader
				time.Sleep(10 * time.Second)
				eb.lead(2) // 00:00:20
				time.Sleep(time.Second)
				require.NoError(t, b.AdoptLedgerFrom("a", HoldsMarked, ledger)) // deposed, it holds the run
				time.Sleep(time.Second)
				require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, Ledger{}.Encode())) // 00:00:22: a restarted
				time.Sleep(2 * time.Second)
				cannot.Store(true)
				time.Sleep(2 * time.Second) // b's window ended at 00:00:25
				synctest.Wait()
				l, err := DecodeLedger(b.Ledger())
				require.NoError(t, err)
				interrupted := run
				interrupted.Outcome, interrupted.Held = OutcomeInterrupted, false
				require.Contains(t, l.Entries, interrupted, "concluded at the takeover")

				cannot.Store(false)
				require.NoError(t, b.AdoptLedgerFrom("a", HoldsMarked, ledger)) // a stale marked copy
				b.mu.Lock()
				_, held := b.heldLocked(b.jobs[0], time.Now())
				b.mu.Unlock()
				assert.False(t, held, "no hold from a stale copy")
				_, err = b.Trigger("m")
				assert.NoError(t, err, "not refused as busy")
				cancel()
				require.NoError(t, b.Wait(context.Background()))
			})
		})
	}
}
