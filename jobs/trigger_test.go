package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A manual run starts at once on the leader, is told it is manual, gets its
// own run id, and leaves the schedule alone: the scheduled instant that
// follows still runs, and the ledger keeps the two apart.
func TestTriggerRunsOnceApartFromSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{behave: sleepFor(5*time.Second, 4)}
		spec := Spec{Name: "h", Schedule: "0 * * * *", Command: []string{"/bin/true"}, Overlap: OverlapSkip}
		r := newTestRunner(t, "n1", f, spec)
		el := newFakeElector(ctx, "n1", r.Callbacks())

		_, err := r.Trigger("h")
		assert.ErrorIs(t, err, ErrNotLeading, "a follower runs nothing")
		el.lead(7)
		synctest.Wait()
		_, err = r.Trigger("nope")
		assert.ErrorIs(t, err, ErrUnknownJob)

		got, err := r.Trigger("h")
		require.NoError(t, err)
		assert.True(t, got.Manual)
		assert.Equal(t, uint64(7), got.Term)
		synctest.Wait()
		calls := f.all()
		require.Len(t, calls, 1, "started at once")
		assert.Equal(t, "manual", calls[0].Env["LANLEADER_TRIGGER"])
		assert.Equal(t, got.RunID, calls[0].Env["LANLEADER_RUN_ID"])
		running, ok := r.RunByID(got.RunID)
		require.True(t, ok)
		assert.Equal(t, OutcomeRunning, running.Outcome)

		_, err = r.Trigger("h")
		assert.ErrorIs(t, err, ErrOverlap, "overlap: skip applies to manual runs")

		time.Sleep(6 * time.Second)
		synctest.Wait()
		done, ok := r.RunByID(got.RunID)
		require.True(t, ok)
		assert.Equal(t, OutcomeFailed, done.Outcome)
		assert.Equal(t, 4, done.ExitCode)
		assert.True(t, done.Manual)

		l, err := DecodeLedger(r.Ledger())
		require.NoError(t, err)
		byID := map[uint64]LedgerEntry{}
		for _, e := range l.Entries {
			byID[e.JobID] = e
		}
		m := byID[ManualJobIDOf("h")]
		assert.Equal(t, OutcomeFailed, m.Outcome, "the manual entry records the outcome")
		assert.True(t, m.Instant.Equal(got.ScheduledAt))
		s := byID[JobIDOf("h")]
		assert.Equal(t, OutcomeNone, s.Outcome, "the schedule's entry is untouched by the manual run")

		// The next scheduled instant runs as scheduled.
		time.Sleep(time.Hour)
		synctest.Wait()
		calls = f.all()
		require.Len(t, calls, 2)
		assert.Equal(t, "schedule", calls[1].Env["LANLEADER_TRIGGER"])
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// A manual run of a node that stops leading is refused, and the CanRun
// guard applies to manual runs like scheduled ones.
func TestTriggerRefusedWithoutStanding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		can := true
		f := &fakeExec{}
		r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{everyMinute("m")}, CanRun: func() bool { return can }}, f)
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(2)
		synctest.Wait()
		can = false
		_, err := r.Trigger("m")
		assert.ErrorIs(t, err, ErrNotLeading)
		can = true
		el.follow("n2", 3)
		synctest.Wait()
		_, err = r.Trigger("m")
		assert.ErrorIs(t, err, ErrNotLeading)
		synctest.Wait()
		assert.Empty(t, f.all())
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}
