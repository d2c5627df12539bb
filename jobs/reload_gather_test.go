package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shellsOf returns the shell command of every call of job.
func shellsOf(f *fakeExec, job string) []string {
	var out []string
	for _, c := range f.all() {
		if c.Env["LANLEADER_JOB"] == job {
			out = append(out, c.Argv[len(c.Argv)-1])
		}
	}
	return out
}

// a, leading term 1, started m's 00:00 run and a manual run of m, and
// died. b takes over at 00:00:20 (term 2, a 5 s gathering window); one
// second in, a reload changes m. The changed job's new loop still makes the
// takeover decision when the window ends: both of a's runs are concluded
// interrupted, and the scheduled one is rerun (rerun_interrupted), once,
// with the new definition.
func TestReloadChangingAJobInTheGatheringWindowConcludesADeadLeadersRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "m", Schedule: "0 * * * *", Shell: "old", RerunInterrupted: true}
		f := &fakeExec{}
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: 5 * time.Second,
			HoldLapse: holdLapseForTest}, f)
		heard := Ledger{Entries: []LedgerEntry{
			{JobID: JobIDOf("m"), Instant: minute(0), Outcome: OutcomeRunning, Term: 1},
			{JobID: ManualJobIDOf("m"), Instant: minute(0).Add(10 * time.Second), Outcome: OutcomeRunning, Term: 1},
		}}
		require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, heard.Encode()))
		time.Sleep(20 * time.Second)
		newFakeElector(ctx, "b", b.Callbacks()).lead(2)
		time.Sleep(time.Second)
		changed := spec
		changed.Shell = "new"
		res, err := b.Update([]Spec{changed})
		require.NoError(t, err)
		require.Equal(t, []string{"m"}, res.Changed)
		time.Sleep(10 * time.Second)
		synctest.Wait()

		e, ok := manualEntry(t, b, "m")
		require.True(t, ok)
		assert.Equal(t, OutcomeInterrupted, e.Outcome, "a's manual run concluded")
		var outcomes []string
		for _, rec := range b.History().Runs("m", 0) {
			if !rec.Manual && rec.ScheduledAt.Equal(minute(0)) {
				outcomes = append(outcomes, rec.Outcome.String())
			}
		}
		assert.ElementsMatch(t, []string{"interrupted", "ok"}, outcomes, "a's run concluded, then b's rerun")
		assert.Equal(t, []string{"2000-01-01T00:00:00Z"}, f.scheduled("m"), "rerun once (rerun_interrupted)")
		assert.Equal(t, []string{"new"}, shellsOf(f, "m"), "with the new definition")
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}

// a ran m at 00:00 and died; b takes over at 00:01:20 (a 5 s gathering
// window) and a reload changes m one second in. The 00:01 instant fell into
// the failover gap: it runs once when the window ends (misfire: run-once),
// with the new definition, and the schedule goes on at 00:02.
func TestReloadChangingAJobInTheGatheringWindowRunsTheFailoverGapInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "m", Schedule: "* * * * *", Shell: "old"}
		f := &fakeExec{}
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: 5 * time.Second}, f)
		require.NoError(t, b.AdoptLedger(ledgerOf("m", minute(0), OutcomeOK, 1)))
		time.Sleep(minute(1).Sub(time.Now()) + 20*time.Second)
		takeover := time.Now()
		newFakeElector(ctx, "b", b.Callbacks()).lead(2)
		time.Sleep(time.Second)
		changed := spec
		changed.Shell = "new"
		_, err := b.Update([]Spec{changed})
		require.NoError(t, err)
		time.Sleep(minute(2).Sub(time.Now()) + time.Second)
		synctest.Wait()

		assert.Equal(t, []string{"2000-01-01T00:01:00Z", "2000-01-01T00:02:00Z"}, f.scheduled("m"))
		assert.Equal(t, []string{"new", "new"}, shellsOf(f, "m"))
		if calls := f.all(); assert.NotEmpty(t, calls) {
			assert.Equal(t, 5*time.Second, calls[0].At.Sub(takeover), "the misfire run waits for the window")
		}
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}

// a led term 1 and started m's 00:00 run (on_leader_loss: finish); b
// takes over at 00:00:20 (term 2, a 5 s gathering window) without m in its
// config, and a reload adds m one second in. m's takeover waits for the
// window, as at the start of the leadership: when a, deposed but still
// running it, says so (its marked ledger, 2 s in), the run is held, neither
// concluded nor run beside a's; when a says nothing (it died), the run is
// concluded interrupted and rerun when the window ends.
func TestReloadAddingAJobInTheGatheringWindowWaitsForTheWindow(t *testing.T) {
	for _, tc := range []struct {
		name        string
		holderSays  bool
		wantRuns    []string
		wantOutcome Outcome
	}{
		{"deposed leader still runs it", true, nil, OutcomeRunning},
		{"leader died", false, []string{"2000-01-01T00:00:00Z"}, OutcomeOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				x := Spec{Name: "x", Schedule: "0 0 * * *", Shell: "x"}
				m := Spec{Name: "m", Schedule: "0 * * * *", Shell: "m", RerunInterrupted: true, OnLeaderLoss: LeaderLossFinish}
				f := &fakeExec{}
				b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{x}, Gather: 5 * time.Second,
					HoldLapse: holdLapseForTest}, f)
				running := Ledger{Entries: []LedgerEntry{{JobID: JobIDOf("m"), Instant: minute(0), Outcome: OutcomeRunning, Term: 1,
					Held: true}}} // a runs it
				require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, running.Encode())) // a's heartbeat as leader
				time.Sleep(20 * time.Second)
				takeover := time.Now()
				newFakeElector(ctx, "b", b.Callbacks()).lead(2)
				time.Sleep(time.Second)
				res, err := b.Update([]Spec{x, m})
				require.NoError(t, err)
				require.Equal(t, []string{"m"}, res.Added)
				time.Sleep(time.Second)
				if tc.holderSays {
					require.NoError(t, b.AdoptLedgerFrom("a", HoldsMarked, running.Encode()))
				}
				// Past the window's end, before a's hold could lapse.
				time.Sleep(takeover.Add(8 * time.Second).Sub(time.Now()))
				synctest.Wait()

				assert.Equal(t, tc.wantRuns, f.scheduled("m"))
				if calls := f.all(); len(tc.wantRuns) > 0 && assert.NotEmpty(t, calls) {
					assert.Equal(t, 5*time.Second, calls[0].At.Sub(takeover), "the rerun waits for the window")
				}
				if st := b.Snapshot(); assert.NotNil(t, st[1].Ledger) {
					assert.Equal(t, tc.wantOutcome, st[1].Ledger.Outcome)
				}
				cancel()
				require.NoError(t, b.Wait(context.Background()))
			})
		})
	}
}

// A reload after the gathering window changes a job whose takeover was
// decided (the 00:01 instant of the failover gap skipped, misfire: skip):
// the new loop takes the schedule up from now and does not decide again.
func TestReloadChangingAJobAfterTheGatheringWindowDoesNotDecideAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "m", Schedule: "* * * * *", Shell: "old", Misfire: MisfireSkip}
		f := &fakeExec{}
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: 5 * time.Second}, f)
		require.NoError(t, b.AdoptLedger(ledgerOf("m", minute(0), OutcomeOK, 1)))
		time.Sleep(minute(1).Sub(time.Now()) + 20*time.Second)
		newFakeElector(ctx, "b", b.Callbacks()).lead(2)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.Equal(t, uint64(1), b.Snapshot()[0].Skipped.Misfired, "00:01 skipped at the takeover")
		changed := spec
		changed.Shell = "new"
		_, err := b.Update([]Spec{changed})
		require.NoError(t, err)
		time.Sleep(minute(2).Sub(time.Now()) + time.Second)
		synctest.Wait()

		assert.Equal(t, uint64(1), b.Snapshot()[0].Skipped.Misfired, "not skipped twice")
		assert.Equal(t, []string{"2000-01-01T00:02:00Z"}, f.scheduled("m"))
		assert.Equal(t, []string{"new"}, shellsOf(f, "m"))
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}
