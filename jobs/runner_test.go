package jobs

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/internal/proc"
)

func everyMinute(name string) Spec {
	return Spec{Name: name, Schedule: "* * * * *", Command: []string{"/bin/true"}}
}

// An hour of a minute schedule passes in fake time: exactly one run per
// instant, keyed by the instant, only while leading.
func TestRunnerRunsOnlyWhileLeading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		r := newTestRunner(t, "n1", f, everyMinute("m"))
		el := newFakeElector(ctx, "n1", r.Callbacks())

		time.Sleep(10 * time.Minute) // following: nothing runs
		assert.Empty(t, f.all())

		start := time.Now()
		el.lead(3)
		time.Sleep(time.Hour)
		synctest.Wait()
		got := f.scheduled("m")
		require.Len(t, got, 60)
		for i, s := range got {
			assert.Equal(t, start.Add(time.Duration(i+1)*time.Minute).Format(time.RFC3339), s)
		}
		c := f.all()[0]
		assert.Equal(t, "3", c.Env["LANLEADER_TERM"])
		assert.Equal(t, "n1", c.Env["LANLEADER_NODE"])
		assert.Equal(t, "m", c.Env["LANLEADER_JOB"])
		assert.NotEmpty(t, c.Env["LANLEADER_RUN_ID"])
		assert.Equal(t, "1", c.Env["BASE"])

		el.follow("n2", 4)
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, f.all(), 60, "no runs after losing leadership")

		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

func TestRunnerCancelOnLeadershipLoss(t *testing.T) {
	tests := []struct {
		policy  LeaderLoss
		want    Outcome
		wantErr string
	}{
		{LeaderLossCancel, OutcomeCancelled, "cancelled"},
		{LeaderLossFinish, OutcomeOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				f := &fakeExec{behave: sleepFor(5*time.Minute, 0)}
				spec := everyMinute("long")
				spec.OnLeaderLoss = tt.policy
				var recs records
				r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{spec},
					OnRunFinished: recs.add}, f)
				el := newFakeElector(ctx, "n1", r.Callbacks())
				el.lead(1)
				time.Sleep(90 * time.Second) // run of 00:01 going
				synctest.Wait()
				require.Len(t, f.all(), 1)
				el.follow("", 1)
				time.Sleep(10 * time.Minute)
				synctest.Wait()
				got := recs.all()
				require.Len(t, got, 1)
				assert.Equal(t, tt.want, got[0].Outcome)
				assert.Contains(t, got[0].Error, tt.wantErr)
				l, err := DecodeLedger(r.Ledger())
				require.NoError(t, err)
				require.Len(t, l.Entries, 1)
				assert.Equal(t, tt.want, l.Entries[0].Outcome, "the ledger says what happened")
				assert.Len(t, f.all(), 1, "nothing new after leadership loss")
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

func TestRunnerOverlap(t *testing.T) {
	tests := []struct {
		overlap     Overlap
		wantStarts  int
		wantSkipped uint64
	}{
		// 00:01 runs until 00:02:30, so 00:02 is skipped; 00:03 runs.
		{OverlapSkip, 2, 1},
		{OverlapAllow, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.overlap.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				f := &fakeExec{behave: sleepFor(90*time.Second, 0)}
				spec := everyMinute("o")
				spec.Overlap = tt.overlap
				r := newTestRunner(t, "n1", f, spec)
				newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
				time.Sleep(3*time.Minute + 30*time.Second)
				synctest.Wait()
				assert.Len(t, f.all(), tt.wantStarts)
				assert.Equal(t, tt.wantSkipped, r.Snapshot()[0].Skipped.Overlap)
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

func TestRunnerTimeoutAndRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{behave: blockUntilCancel}
		spec := Spec{Name: "t", Schedule: "@hourly", Shell: "sleep 1000", Timeout: 30 * time.Second,
			Retries: 2, RetryDelay: 10 * time.Second}
		var recs records
		r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{spec},
			OnRunFinished: recs.add}, f)
		newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
		time.Sleep(time.Hour + 5*time.Minute)
		synctest.Wait()
		calls := f.all()
		require.Len(t, calls, 3, "1 attempt + 2 retries")
		assert.Equal(t, []string{"/bin/sh", "-c", "sleep 1000"}, calls[0].Argv)
		assert.Equal(t, 40*time.Second, calls[1].At.Sub(calls[0].At), "timeout then retry_delay")
		got := recs.all()
		require.Len(t, got, 1)
		assert.Equal(t, OutcomeFailed, got[0].Outcome)
		assert.Equal(t, 3, got[0].Attempt)
		assert.Contains(t, got[0].Error, "timeout after 30s")
		assert.Equal(t, 110*time.Second, got[0].Duration)
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

func TestRunnerRetryThenSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		n := 0
		f := &fakeExec{behave: func(ctx context.Context, c call) proc.Result {
			n++
			if n < 2 {
				return proc.Result{ExitCode: 7}
			}
			return proc.Result{}
		}}
		spec := Spec{Name: "r", Schedule: "@hourly", Command: []string{"x"}, Retries: 5}
		r := newTestRunner(t, "n1", f, spec)
		newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
		time.Sleep(time.Hour + time.Minute)
		synctest.Wait()
		st := r.Snapshot()[0]
		require.NotNil(t, st.LastRun)
		assert.Equal(t, OutcomeOK, st.LastRun.Outcome)
		assert.Equal(t, 2, st.LastRun.Attempt)
		assert.Equal(t, 0, st.LastRun.ExitCode)
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// The guard says no for three minutes: each instant it refused waits
// until the next one comes due (then it is skipped, counted refused); the
// last one starts as soon as the guard says yes, and the schedule goes on.
func TestRunnerCanRunGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		var allowed atomic.Bool
		r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{everyMinute("g")},
			CanRun: allowed.Load}, f)
		newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
		time.Sleep(3*time.Minute + time.Second)
		synctest.Wait()
		assert.Empty(t, f.all())
		assert.Equal(t, uint64(2), r.Snapshot()[0].Skipped.Refused, "00:01 and 00:02, overtaken")
		allowed.Store(true)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"2000-01-01T00:03:00Z", "2000-01-01T00:04:00Z"}, f.scheduled("g"))
		assert.Equal(t, uint64(2), r.Snapshot()[0].Skipped.Refused)
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

func TestRunnerPanicIsolated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{behave: func(ctx context.Context, c call) proc.Result {
			if c.Env["LANLEADER_JOB"] == "bad" {
				panic("boom")
			}
			return proc.Result{}
		}}
		r := newTestRunner(t, "n1", f, everyMinute("bad"), everyMinute("good"))
		newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
		time.Sleep(5*time.Minute + time.Second)
		synctest.Wait()
		assert.Len(t, f.scheduled("good"), 5)
		assert.Len(t, f.scheduled("bad"), 5, "the panicking job keeps being scheduled")
		st := r.Snapshot()
		require.NotNil(t, st[0].LastRun)
		assert.Equal(t, OutcomeFailed, st[0].LastRun.Outcome)
		assert.Contains(t, st[0].LastRun.Error, "panic: boom")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

func TestNewRunnerRejectsBadJobs(t *testing.T) {
	_, err := NewRunner(testCluster{}, RunnerConfig{Jobs: []Spec{everyMinute("a"), everyMinute("a")}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"a" already used`)
	_, err = NewRunner(testCluster{}, RunnerConfig{Jobs: []Spec{{Name: "x", Schedule: "bogus", Shell: "true"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schedule")
}

func TestSnapshotJSON(t *testing.T) {
	rec := RunRecord{Job: "j", RunID: "r", Outcome: OutcomeOK, Duration: 1500 * time.Millisecond, Attempt: 1}
	b, err := json.Marshal(JobStatus{Name: "j", Schedule: "@daily", LastRun: &rec,
		Ledger: &LedgerEntry{Instant: t0, Outcome: OutcomeRunning, Term: 4}})
	require.NoError(t, err)
	s := string(b)
	assert.Contains(t, s, `"duration_seconds":1.5`)
	assert.Contains(t, s, `"outcome":"ok"`)
	assert.Contains(t, s, `"ledger":{"instant":"2026-11-30T20:00:00Z","outcome":"running","term":4}`)
	assert.NotContains(t, s, "Duration")
}

// Wait waits for finish-policy runs, and when its context ends first it
// cancels them and reports that.
func TestWaitGivesUpOnFinishRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := &fakeExec{behave: sleepFor(time.Hour, 0)}
		spec := everyMinute("slow")
		spec.OnLeaderLoss = LeaderLossFinish
		r := newTestRunner(t, "n1", f, spec)
		newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
		time.Sleep(61 * time.Second)
		cancel() // the elector's Run is over: leadership ended
		wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
		defer wcancel()
		start := time.Now()
		require.ErrorIs(t, r.Wait(wctx), context.DeadlineExceeded)
		assert.Equal(t, time.Minute, time.Since(start), "waited for the run until the deadline")
		st := r.Snapshot()[0]
		require.NotNil(t, st.LastRun)
		assert.Equal(t, OutcomeCancelled, st.LastRun.Outcome)
		assert.Zero(t, st.Running)
	})
}
