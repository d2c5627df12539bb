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

// ledByParity says who led a term the way the udp term's tag does: a led
// the odd terms, b the even ones.
func ledByParity(term uint64, node string) bool {
	if term%2 == 1 {
		return node == "a"
	}
	return node == "b"
}

// A holder that restarted holds another run before any leader concluded
// the run its previous process started: a (term 1) started a run and was
// killed; its new process, whose state file gave that run back as running,
// leads term 3 just long enough to start n (a manual run, 150 s), and is
// deposed by b (term 4) within its gathering window, n going on. b
// restarted meanwhile (its state file says the same), so it holds
// nothing. What a sends, marked holding, on each of b's heartbeats names
// n's run, which it runs, and not the one its previous process started,
// which it cannot be running: b holds n, concludes the old run at its
// takeover, and runs m's instants (00:02, 00:03) while n goes on.
func TestRestartedHolderHoldsOnlyItsOwnRuns(t *testing.T) {
	for _, tc := range []struct {
		name     string
		restored Ledger // a's and b's state files: a's term 1, a killed at 00:01:15
		warn     string // b's takeover about the old run
	}{
		{"scheduled run", Ledger{Entries: []LedgerEntry{
			{JobID: JobIDOf("m"), Instant: minute(1), Outcome: OutcomeRunning, Term: 1},
		}}, "jobs: previous leader's run was interrupted; not running it again"},
		{"manual run", Ledger{Entries: []LedgerEntry{
			{JobID: JobIDOf("m"), Instant: minute(1), Outcome: OutcomeOK, Term: 1},
			{JobID: ManualJobIDOf("m"), Instant: minute(1).Add(10 * time.Second), Outcome: OutcomeRunning, Term: 1},
		}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				m := holdJob(OverlapSkip, false)
				n := Spec{Name: "n", Schedule: "0 0 * * *", Shell: "x", Overlap: OverlapSkip, OnLeaderLoss: LeaderLossFinish}
				fa := &fakeExec{behave: sleepFor(150*time.Second, 0)}
				fb := &fakeExec{behave: sleepFor(10*time.Second, 0)}
				logs := &logSink{}
				var holding atomic.Bool
				a := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{m, n}, Gather: 5 * time.Second,
					HoldLapse: holdLapseForTest, OnHolding: holding.Store}, fa)
				b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{m, n}, Gather: 5 * time.Second,
					HoldLapse: holdLapseForTest, Logger: slog.New(logs)}, fb)
				require.NoError(t, a.AdoptLedger(tc.restored.Encode()))
				require.NoError(t, b.AdoptLedger(tc.restored.Encode()))
				ea := newFakeElector(ctx, "a", a.Callbacks())
				eb := newFakeElector(ctx, "b", b.Callbacks())

				// The network: each leader's heartbeat, once a second, to
				// the other; a's marked ledger on each of b's; c, a
				// follower that restarted too, passes its pool on.
				var aLeads, bLeads atomic.Bool
				var wg sync.WaitGroup
				wg.Go(func() {
					tick := time.NewTicker(time.Second)
					defer tick.Stop()
					for {
						select {
						case <-ctx.Done():
							return
						case <-tick.C:
						}
						switch {
						case aLeads.Load():
							require.NoError(t, b.AdoptLedgerFrom("a", SaysNoHolds, a.Ledger()))
						case bLeads.Load():
							require.NoError(t, a.AdoptLedgerFrom("b", SaysNoHolds, b.Ledger()))
							require.NoError(t, a.AdoptLedgerFrom("c", HoldsNothing, tc.restored.Encode()))
							word := HoldsNothing
							if holding.Load() {
								word = HoldsMarked
							}
							require.NoError(t, b.AdoptLedgerFrom("a", word, a.Ledger()))
						}
					}
				})

				time.Sleep(minute(1).Add(30 * time.Second).Sub(time.Now()))
				aLeads.Store(true)
				ea.lead(3)
				eb.follow("a", 3)
				synctest.Wait()
				_, err := a.Trigger("n")
				require.NoError(t, err)
				time.Sleep(2 * time.Second) // 00:01:32: b takes over, a's gathering window not over
				aLeads.Store(false)
				bLeads.Store(true)
				ea.follow("b", 4)
				eb.lead(4)
				time.Sleep(minute(3).Add(time.Second).Sub(time.Now()))
				synctest.Wait()
				require.True(t, holding.Load(), "a still runs n")

				assert.Equal(t, []string{"2000-01-01T00:02:00Z", "2000-01-01T00:03:00Z"}, fb.scheduled("m"),
					"m is not held by the run a's previous process started")
				assert.Zero(t, b.Snapshot()[0].Skipped.Overlap)
				_, err = b.Trigger("n")
				assert.ErrorIs(t, err, ErrOverlap, "n's run on a is held")
				if tc.warn != "" {
					assert.Len(t, logs.find(tc.warn), 1)
				}
				cancel()
				wg.Wait()
				require.NoError(t, a.Wait(context.Background()))
				require.NoError(t, b.Wait(context.Background()))
			})
		})
	}
}

// What a node passes on of running entries: each as it knows it, running,
// and marked held only for the runs this process runs: neither a run its
// previous process started (whichever term it carries, wherever the entry
// came from) nor another node's; and once that instant is concluded, the
// conclusion.
func TestLedgerMarksHeldOnlyThisProcesssRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		m := Spec{Name: "m", Schedule: "0 0 * * *", Shell: "x"}
		n := Spec{Name: "n", Schedule: "0 0 * * *", Shell: "x", OnLeaderLoss: LeaderLossFinish}
		k := Spec{Name: "k", Schedule: "0 0 * * *", Shell: "x"}
		r := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{m, n, k}, Gather: time.Minute},
			&fakeExec{behave: sleepFor(time.Minute, 0)})
		old := LedgerEntry{JobID: JobIDOf("m"), Instant: minute(0), Outcome: OutcomeRunning, Term: 1}
		relayed := LedgerEntry{JobID: JobIDOf("k"), Instant: minute(0), Outcome: OutcomeRunning, Term: 2}
		require.NoError(t, r.AdoptLedger(Ledger{Entries: []LedgerEntry{old, relayed}}.Encode()))
		told := func() map[uint64]LedgerEntry {
			l, err := DecodeLedger(r.Ledger())
			require.NoError(t, err)
			out := map[uint64]LedgerEntry{}
			for _, e := range l.Entries {
				out[e.JobID] = e
			}
			return out
		}
		assert.Equal(t, old, told()[old.JobID], "its previous process's run: running, not held")
		assert.Equal(t, relayed, told()[relayed.JobID], "b's run, relayed")
		require.NoError(t, r.AdoptLedgerFrom("c", HoldsNothing, Ledger{Entries: []LedgerEntry{old}}.Encode()))
		assert.Equal(t, old, told()[old.JobID], "relayed back to it")

		el := newFakeElector(ctx, "a", r.Callbacks())
		el.lead(3)
		synctest.Wait()
		rec, err := r.Trigger("n")
		require.NoError(t, err)
		mine := LedgerEntry{JobID: ManualJobIDOf("n"), Instant: rec.ScheduledAt, Outcome: OutcomeRunning, Term: 3, Held: true, Stop: stopUnbounded}
		assert.Equal(t, mine, told()[mine.JobID], "its own run")
		assert.Equal(t, old, told()[old.JobID], "gathering: not concluded yet")
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		mine, mine.Held = mine.ended(OutcomeOK), false
		assert.Equal(t, mine, told()[mine.JobID])
		concluded := old
		concluded.Outcome = OutcomeInterrupted
		assert.Equal(t, concluded, told()[old.JobID], "its takeover concluded it")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}
