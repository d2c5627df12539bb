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

// A job removed by a reload while its run goes on (finish lets it complete;
// cancel stops it, but a process that ignores SIGTERM lives for kill_grace)
// and added back before that run ended is the same job (its name): the run
// still going here is its run. The reload must neither take it for an
// interrupted run of a gone leader and run its instant again, nor start the
// next instant beside it under overlap: skip.
func TestReaddedJobKnowsItsRunStillGoing(t *testing.T) {
	for _, tc := range []struct {
		name string
		loss LeaderLoss
	}{
		{"finish", LeaderLossFinish},
		{"cancel, SIGTERM ignored", LeaderLossCancel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				a := Spec{Name: "a", Schedule: "@every 10s", Shell: "x", OnLeaderLoss: tc.loss,
					RerunInterrupted: true, KillGrace: 30 * time.Second}
				other := Spec{Name: "other", Schedule: "0 0 1 1 *", Shell: "y"}
				f := &fakeExec{behave: ignoresTerm(25*time.Second, 30*time.Second)}
				logs := &logSink{}
				r := newTestRunnerCfg(t, testConfig{Node: "n", Jobs: []Spec{a}, Logger: slog.New(logs)}, f)
				newFakeElector(ctx, "n", r.Callbacks()).lead(1)
				time.Sleep(15 * time.Second) // 00:10 runs until 00:35 at least
				_, err := r.Update([]Spec{other})
				require.NoError(t, err)
				time.Sleep(2 * time.Second)
				_, err = r.Update([]Spec{a, other})
				require.NoError(t, err)
				time.Sleep(15 * time.Second)
				synctest.Wait()

				assert.Equal(t, []string{"2000-01-01T00:00:10Z"}, f.scheduled("a"),
					"00:10 still runs here: not again, and 00:20 and 00:30 not beside it (overlap: skip)")
				assert.Empty(t, logs.find("jobs: previous leader's run was interrupted; running it again (rerun_interrupted)"))
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

// renamingHandover is newHandover of m (holdJob: overlap skip,
// rerun_interrupted), with m and m renamed, for reloads that remove m and
// add it back.
func renamingHandover(t *testing.T, ctx context.Context) (h *handover, m, renamed Spec) {
	m = holdJob(OverlapSkip, true)
	renamed = m
	renamed.Name = "renamed"
	return newHandover(t, ctx, m), m, renamed
}

// The same across nodes: a, deposed, still runs 00:01 (finish) and holds
// it; b, leading, has the job removed and added back by reloads (a rename
// and back, or a job commented out for a moment). a's run is still its
// hold: b neither runs 00:01 again nor starts a run beside it.
func TestReaddedJobKeepsAHoldOnItsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		h, spec, renamed := renamingHandover(t, ctx)
		time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
		h.depose()
		time.Sleep(20 * time.Second)
		_, err := h.b.Update([]Spec{renamed})
		require.NoError(t, err)
		time.Sleep(5 * time.Second)
		_, err = h.b.Update([]Spec{spec})
		require.NoError(t, err)
		time.Sleep(minute(5).Sub(time.Now()))
		synctest.Wait()

		assert.NotContains(t, h.fb.scheduled("m"), "2000-01-01T00:01:00Z", "a's run is not run again")
		var bm []call
		for _, c := range h.fb.all() {
			if c.Env["LANLEADER_JOB"] == "m" {
				bm = append(bm, c)
			}
		}
		assert.False(t, runsOverlap(h.fa.all(), bm), "no run of m on b beside a's: a %v, b %v", h.fa.scheduled("m"), h.fb.scheduled("m"))
		h.stop(cancel)
	})
}

// The other side: a's own reload removes m (a rename that reached a
// first, a job commented out) while a's run of m goes on (finish), and a
// is deposed. That run is still a's, whatever a's config says: a names it
// held, so b, which still has m, holds it too: b neither concludes a's
// scheduled run interrupted and runs 00:01 again, nor starts m beside
// either run (overlap: skip).
func TestRemovedJobsRunIsStillHeldByItsNode(t *testing.T) {
	for _, manual := range []bool{false, true} {
		t.Run(map[bool]string{false: "scheduled", true: "manual"}[manual], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				h, _, renamed := renamingHandover(t, ctx)
				if manual {
					time.Sleep(10 * time.Second)
					_, err := h.a.Trigger("m") // 00:00:10 until 00:02:40
					require.NoError(t, err)
				} else {
					time.Sleep(minute(1).Sub(time.Now()) + 20*time.Second) // 00:01 until 00:03:30
				}
				time.Sleep(10 * time.Second)
				_, err := h.a.Update([]Spec{renamed})
				require.NoError(t, err)
				time.Sleep(10 * time.Second)
				h.depose()
				time.Sleep(minute(5).Sub(time.Now()))
				synctest.Wait()

				require.Len(t, h.fa.all(), 1, "a ran m once")
				assert.NotContains(t, h.fb.scheduled("m"), "2000-01-01T00:01:00Z",
					"00:01 is not started on b while a's run (of 00:01, or manual) goes on")
				assert.False(t, runsOverlap(h.fa.all(), h.fb.all()), "no run of m on b beside a's: a %v, b %v",
					h.fa.all()[0].At, h.fb.scheduled("m"))
				assert.Empty(t, h.logs.find("jobs: previous leader's run was interrupted; running it again (rerun_interrupted)"))
				h.stop(cancel)
			})
		})
	}
}
