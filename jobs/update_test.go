package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lanleader/lanleader/internal/proc"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUpdateWhileLeading reloads the job list of a leading Runner: the kept
// job goes on without a gap or a repeat, the added one starts, the removed
// one stops and its run in progress follows on_leader_loss, and the
// leadership is untouched throughout.
func TestUpdateWhileLeading(t *testing.T) {
	for _, tt := range []struct {
		policy LeaderLoss
		want   Outcome
	}{
		{LeaderLossCancel, OutcomeCancelled},
		{LeaderLossFinish, OutcomeOK},
	} {
		t.Run(tt.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				f := &fakeExec{behave: func(ctx context.Context, c call) proc.Result {
					if c.Env["LANLEADER_JOB"] == "gone" {
						return sleepFor(5*time.Minute, 0)(ctx, c)
					}
					return proc.Result{Started: c.At}
				}}
				kept, gone := everyMinute("kept"), everyMinute("gone")
				gone.OnLeaderLoss = tt.policy
				var recs records
				r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{kept, gone}, OnRunFinished: recs.add}, f)
				el := newFakeElector(ctx, "n1", r.Callbacks())
				el.lead(1)
				time.Sleep(90 * time.Second) // kept ran at 00:01, gone's run of 00:01 is going
				synctest.Wait()
				require.Len(t, f.scheduled("gone"), 1)

				res, err := r.Update([]Spec{kept, everyMinute("added")})
				require.NoError(t, err)
				assert.Equal(t, UpdateResult{Added: []string{"added"}, Removed: []string{"gone"}}, res)

				time.Sleep(10 * time.Minute)
				synctest.Wait()
				assert.Len(t, f.scheduled("gone"), 1, "a removed job is not scheduled again")
				assert.Len(t, f.scheduled("kept"), 11, "the kept job runs every minute, no gap, no repeat")
				assert.Len(t, f.scheduled("added"), 10, "the added job runs from the next minute")
				var goneRecs []RunRecord
				for _, rec := range recs.all() {
					if rec.Job == "gone" {
						goneRecs = append(goneRecs, rec)
					}
				}
				require.Len(t, goneRecs, 1)
				assert.Equal(t, tt.want, goneRecs[0].Outcome, "the removed job's run follows on_leader_loss")
				names := []string{}
				for _, s := range r.Snapshot() {
					names = append(names, s.Name)
				}
				assert.Equal(t, []string{"kept", "added"}, names)
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

// TestUpdateChangedSchedule changes a job's schedule while leading: the
// new schedule applies from the reload on; a run in progress goes on.
func TestUpdateChangedSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{behave: sleepFor(90*time.Second, 0)}
		var recs records
		r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{everyMinute("j")}, OnRunFinished: recs.add}, f)
		el := newFakeElector(ctx, "n1", r.Callbacks())
		start := time.Now()
		el.lead(1)
		time.Sleep(70 * time.Second) // the 00:01 run is going
		synctest.Wait()
		require.Len(t, f.scheduled("j"), 1)

		hourly := everyMinute("j")
		hourly.Schedule = "0 * * * *"
		res, err := r.Update([]Spec{hourly})
		require.NoError(t, err)
		assert.Equal(t, []string{"j"}, res.Changed)
		time.Sleep(58 * time.Minute)
		synctest.Wait()
		assert.Len(t, f.scheduled("j"), 1, "no per-minute runs after the change")
		require.Len(t, recs.all(), 1)
		assert.Equal(t, OutcomeOK, recs.all()[0].Outcome, "the run in progress finished")
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		got := f.scheduled("j")
		require.Len(t, got, 2, "the hourly instant ran")
		assert.Equal(t, start.Truncate(time.Hour).Add(time.Hour).Format(time.RFC3339), got[1])

		_, err = r.Update([]Spec{{Name: "bad", Schedule: "61 * * * *", Shell: "true"}})
		assert.Error(t, err, "invalid specs are refused")
		assert.Len(t, r.Snapshot(), 1, "and change nothing")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}
