package jobs

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reloadAtFirstStart returns a CanRun that, the first time it is asked
// (the loop's timer has fired and the loop is about to decide the instant,
// before it takes the Runner's lock), reloads r with specs: the order the
// issue saw, a reload landing between a timer firing and the start.
func reloadAtFirstStart(t *testing.T, r **Runner, specs ...Spec) func() bool {
	var done atomic.Bool
	return func() bool {
		if done.CompareAndSwap(false, true) {
			_, err := (*r).Update(specs)
			require.NoError(t, err)
		}
		return true
	}
}

// m runs every minute (shell "old"); a reload lands at 00:01, after the
// loop's timer fired and before the loop took the lock. A changed job's new
// loop takes 00:01 over and runs it once, with the new definition; a
// removed job's instant is not run, and the log says so.
func TestReloadAtAnInstantTakesItOver(t *testing.T) {
	m := Spec{Name: "m", Schedule: "* * * * *", Shell: "old"}
	changed := m
	changed.Shell = "new"
	other := Spec{Name: "other", Schedule: "0 0 1 1 *", Shell: "x"}
	for _, tc := range []struct {
		name     string
		reloaded []Spec
		want     []string // m's shells, 00:01 then 00:02
		wantLog  string
	}{
		{"changed", []Spec{changed}, []string{"new", "new"}, ""},
		{"removed", []Spec{other}, nil, "jobs: job removed by reload before its due instant started; not run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				f := &fakeExec{}
				logs := &logSink{}
				var r *Runner
				r = newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{m}, Logger: slog.New(logs),
					CanRun: reloadAtFirstStart(t, &r, tc.reloaded...)}, f)
				newFakeElector(ctx, "a", r.Callbacks()).lead(1)
				time.Sleep(2*time.Minute + time.Second)
				synctest.Wait()

				assert.Equal(t, tc.want, shellsOf(f, "m"))
				if tc.want != nil {
					assert.Equal(t, []string{"2000-01-01T00:01:00Z", "2000-01-01T00:02:00Z"}, f.scheduled("m"))
				}
				if tc.wantLog != "" {
					if l := logs.find(tc.wantLog); assert.Len(t, l, 1) {
						assert.Equal(t, "2000-01-01 00:01:00 +0000 UTC", l[0]["scheduled_at"])
					}
				}
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

// b took over at 00:01:20 with a 5 s gathering window; when it ends, b
// decides to run 00:01 (misfire: run-once, a ran 00:00) or to rerun 00:00
// (a left it running, rerun_interrupted). A reload changing m lands right
// then, before the start: the new loop makes the decided start, once, with
// the new definition.
func TestReloadAfterADecidedStartTakesItOver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outcome Outcome
		want    string
	}{
		{"misfire", OutcomeOK, "2000-01-01T00:01:00Z"},
		{"rerun", OutcomeRunning, "2000-01-01T00:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				m := Spec{Name: "m", Schedule: "* * * * *", Shell: "old", RerunInterrupted: true}
				changed := m
				changed.Shell = "new"
				f := &fakeExec{}
				var b *Runner
				b = newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{m}, Gather: 5 * time.Second,
					CanRun: reloadAtFirstStart(t, &b, changed)}, f)
				require.NoError(t, b.AdoptLedger(ledgerOf("m", minute(0), tc.outcome, 1)))
				time.Sleep(minute(1).Add(20 * time.Second).Sub(time.Now()))
				newFakeElector(ctx, "b", b.Callbacks()).lead(2)
				time.Sleep(10 * time.Second)
				synctest.Wait()

				assert.Equal(t, []string{tc.want}, f.scheduled("m"), "the decided start, once")
				assert.Equal(t, []string{"new"}, shellsOf(f, "m"))
				cancel()
				require.NoError(t, b.Wait(context.Background()))
			})
		})
	}
}
