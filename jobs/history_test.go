package jobs

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rec(job, id string, started time.Time, o Outcome) RunRecord {
	return RunRecord{Job: job, RunID: id, ScheduledAt: started.Truncate(time.Minute), Started: started,
		Outcome: o, Term: 3, Node: "n1", Attempt: 1, Duration: 1500 * time.Millisecond}
}

func TestHistoryKeepsNewestFirstAndBounded(t *testing.T) {
	h := NewHistory(3)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		h.Add(rec("a", fmt.Sprint("r", i), t0.Add(time.Duration(i)*time.Minute), OutcomeOK))
	}
	h.Add(rec("b", "other", t0, OutcomeFailed))
	got := h.Runs("a", 0)
	require.Len(t, got, 3)
	assert.Equal(t, []string{"r4", "r3", "r2"}, []string{got[0].RunID, got[1].RunID, got[2].RunID})
	assert.Len(t, h.Runs("a", 2), 2)
	assert.Len(t, h.Runs("b", 0), 1)
	assert.Empty(t, h.Runs("nope", 0))

	// Out of order: an older run added late still sorts by its start.
	h.Add(rec("a", "late", t0.Add(150*time.Second), OutcomeOK))
	got = h.Runs("a", 0)
	assert.Equal(t, []string{"r4", "r3", "late"}, []string{got[0].RunID, got[1].RunID, got[2].RunID})

	found, ok := h.Find("r3")
	assert.True(t, ok)
	assert.Equal(t, "a", found.Job)
	_, ok = h.Find("")
	assert.False(t, ok, "heard records have no run id; an empty id finds nothing")
}

func TestHistoryHeardDoesNotReplaceLocal(t *testing.T) {
	h := NewHistory(5)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	local := rec("a", "r1", t0, OutcomeOK)
	local.ScheduledAt = t0
	h.Add(local)
	heard := RunRecord{Job: "a", ScheduledAt: t0, Term: 3, Outcome: OutcomeOK, Heard: true, Node: "n1"}
	h.Add(heard)
	got := h.Runs("a", 0)
	require.Len(t, got, 1)
	assert.Equal(t, "r1", got[0].RunID, "the local record knows more")

	// A heard run's own outcome replaces a leader's conclusion that it was
	// interrupted, never the other way round (a stale relay).
	h2 := NewHistory(5)
	interrupted := heard
	interrupted.Outcome = OutcomeInterrupted
	h2.Add(interrupted)
	h2.Add(interrupted)
	require.Len(t, h2.Runs("a", 0), 1, "the same run heard twice is kept once")
	h2.Add(heard)
	got = h2.Runs("a", 0)
	require.Len(t, got, 1)
	assert.Equal(t, OutcomeOK, got[0].Outcome, "its own outcome heard late")
	h2.Add(interrupted)
	got = h2.Runs("a", 0)
	require.Len(t, got, 1)
	assert.Equal(t, OutcomeOK, got[0].Outcome, "a stale conclusion does not take it back")
	// A manual run of the same second is another run.
	manual := heard
	manual.Manual = true
	h2.Add(manual)
	assert.Len(t, h2.Runs("a", 0), 2)
}

func TestHistorySnapshotRestore(t *testing.T) {
	h := NewHistory(4)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := rec("a", "r1", t0, OutcomeFailed)
	a.ExitCode, a.Error, a.Manual = 3, "exit status 3", true
	h.Add(a)
	h.Add(rec("b", "r2", t0.Add(time.Minute), OutcomeOK))

	restored := NewHistory(4)
	restored.Add(rec("a", "r0", t0.Add(-time.Minute), OutcomeOK))
	require.NoError(t, restored.Restore(h.Snapshot()))
	require.NoError(t, restored.Restore(h.Snapshot()), "restoring twice keeps one copy")
	got := restored.Runs("a", 0)
	require.Len(t, got, 2)
	assert.Equal(t, a.RunID, got[0].RunID)
	assert.Equal(t, a.Duration, got[0].Duration, "duration survives the JSON round trip")
	assert.True(t, got[0].Started.Equal(a.Started))
	assert.Equal(t, OutcomeFailed, got[0].Outcome)
	assert.Equal(t, 3, got[0].ExitCode)
	assert.True(t, got[0].Manual)
	assert.Len(t, restored.Runs("b", 0), 1)

	for name, bad := range map[string]string{
		"not json":      "{",
		"wrong version": `{"version":99,"runs":{}}`,
		"misfiled":      `{"version":1,"runs":{"a":[{"job":"b","run_id":"x","outcome":"ok"}]}}`,
		"bad outcome":   `{"version":1,"runs":{"a":[{"job":"a","run_id":"x","outcome":"great"}]}}`,
	} {
		before := restored.Snapshot()
		assert.Error(t, restored.Restore([]byte(bad)), name)
		assert.Equal(t, string(before), string(restored.Snapshot()), "%s: a bad snapshot changes nothing", name)
	}
}

// A runner files its own runs (with node and run id) and the runs it hears
// of in a leader's ledger (heard, with the leader of that term).
func TestRunnerHistoryOwnAndHeard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{behave: sleepFor(10*time.Second, 0)}
		r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{everyMinute("m")}, HistorySize: 5}, f)
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(3)
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		runs := r.Jobs(0)[0].Runs
		require.Len(t, runs, 5, "bounded by HistorySize")
		for i, run := range runs {
			assert.Equal(t, "n1", run.Node)
			assert.NotEmpty(t, run.RunID)
			assert.False(t, run.Manual)
			assert.Equal(t, OutcomeOK, run.Outcome)
			assert.Equal(t, 10*time.Second, run.Duration)
			if i > 0 {
				assert.True(t, run.ScheduledAt.Before(runs[i-1].ScheduledAt), "newest first")
			}
		}

		// A follower hears n1's ledger: the finished run is filed as heard,
		// the running one is not (yet).
		f2 := &fakeExec{}
		r2 := newTestRunner(t, "n2", f2, everyMinute("m"))
		el2 := newFakeElector(ctx, "n2", r2.Callbacks())
		el2.follow("n1", 3)
		synctest.Wait()
		instant := time.Now().UTC().Truncate(time.Second)
		id := JobIDOf("m")
		require.NoError(t, r2.AdoptLedger(Ledger{Entries: []LedgerEntry{{JobID: id, Instant: instant, Outcome: OutcomeRunning, Term: 3}}}.Encode()))
		assert.Empty(t, r2.Jobs(0)[0].Runs)
		require.NoError(t, r2.AdoptLedger(Ledger{Entries: []LedgerEntry{
			{JobID: id, Instant: instant, Outcome: OutcomeOK, Term: 3},
			{JobID: ManualJobIDOf("m"), Instant: instant, Outcome: OutcomeFailed, Term: 3},
			{JobID: JobIDOf("unknown"), Instant: instant, Outcome: OutcomeOK, Term: 3},
		}}.Encode()))
		runs = r2.Jobs(0)[0].Runs
		require.Len(t, runs, 2)
		for _, run := range runs {
			assert.True(t, run.Heard)
			assert.Equal(t, "n1", run.Node, "the leader of term 3")
			assert.True(t, run.ScheduledAt.Equal(instant))
		}
		assert.NotEqual(t, runs[0].Manual, runs[1].Manual, "one scheduled, one manual")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
		require.NoError(t, r2.Wait(context.Background()))
	})
}

func TestJobsListsNextInstants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRunner(t, "n1", &fakeExec{}, everyMinute("m"))
		now := time.Now()
		v := r.Jobs(0)
		require.Len(t, v, 1)
		require.Len(t, v[0].Next, NextCount)
		for i, n := range v[0].Next {
			assert.True(t, n.After(now))
			assert.Equal(t, 0, n.Second())
			if i > 0 {
				assert.Equal(t, time.Minute, n.Sub(v[0].Next[i-1]))
			}
		}
		assert.Equal(t, "* * * * *", v[0].Schedule)
		assert.NotNil(t, v[0].Runs, "an empty list, not null, in JSON")
	})
}
