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

// The nemesis's case: a (term 1) ran 00:00:18 of a job every second and
// lost its quorum; b leads from 00:00:20.571 (term 2, a one-second
// gathering window) and runs 00:00:21 inside it; a follower relays b's own
// ledger back before the window ends, so b's pool holds b's run where it
// held a's (heard before the takeover, or in the window). When the window
// ends, 00:00:19 and 00:00:20, overtaken by 00:00:21, are skipped with
// that reason logged, not silently.
func TestGapOvertakenInTheWindowIsLoggedAfterARelay(t *testing.T) {
	for _, heard := range []time.Duration{18*time.Second + 300*time.Millisecond, 20*time.Second + 800*time.Millisecond} {
		t.Run(heard.String(), func(t *testing.T) { gapOvertakenAfterARelay(t, heard) })
	}
}

func gapOvertakenAfterARelay(t *testing.T, heard time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		logs := &logSink{}
		spec := Spec{Name: "tick", Schedule: "* * * * * *", Shell: "x"}
		f := &fakeExec{}
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: time.Second,
			Logger: slog.New(logs)}, f)
		a := func() {
			require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, ledgerOf("tick", minute(0).Add(18*time.Second), OutcomeOK, 1)))
		}
		takeover := 20*time.Second + 571*time.Millisecond
		if heard < takeover {
			time.Sleep(heard)
			a()
		}
		time.Sleep(minute(0).Add(takeover).Sub(time.Now()))
		newFakeElector(ctx, "b", b.Callbacks()).lead(2)
		if heard > takeover {
			time.Sleep(minute(0).Add(heard).Sub(time.Now()))
			a()
		}
		time.Sleep(minute(0).Add(21*time.Second + 300*time.Millisecond).Sub(time.Now()))
		require.NoError(t, b.AdoptLedgerFrom("c", HoldsNothing, b.Ledger())) // c relays b's pool back
		time.Sleep(2 * time.Second)
		synctest.Wait()

		assert.Equal(t, []string{"2000-01-01T00:00:21Z", "2000-01-01T00:00:22Z", "2000-01-01T00:00:23Z"}, f.scheduled("tick"))
		if l := logs.find("jobs: instants missed during failover; overtaken by a later instant already started"); assert.Len(t, l, 1) {
			assert.Equal(t, "2000-01-01 00:00:20 +0000 UTC", l[0]["scheduled_at"])
			assert.Equal(t, "2", l[0]["count"])
		}
		assert.Equal(t, uint64(2), b.Snapshot()[0].Skipped.Misfired)
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}

// The nemesis's case (seed 229188171, 04:07:22): a (term 1) ran 00:00:21
// of a job every second, recorded 00:00:22 running and was killed before
// its commit; b leads from 00:00:23.905 (term 2, a one-second gathering
// window) and runs 00:00:24 inside it, and only then hears a's entry of
// 00:00:22 (a follower's LEDGER). When the window ends, 00:00:22 is
// concluded interrupted (ledger, history, a WARN naming it) and not run
// again, even with rerun_interrupted (a later instant already started and
// the schedule only goes forward); 00:00:23 is overtaken. Neither is
// silent.
// If a still says it runs 00:00:22 (it holds it: cut off, not killed),
// the run is its: not concluded.
func TestGapOvertakenConcludesTheRunItTookOver(t *testing.T) {
	for _, rerun := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "rerun_interrupted"}[rerun], func(t *testing.T) {
			gapOvertakenConcludes(t, rerun)
		})
	}
	t.Run("held", gapOvertakenHeld)
}

// As TestGapOvertakenConcludesTheRunItTookOver, but a refused its run of
// 00:00:22 before its first attempt (its entry says refused: the instant
// did not start, refused.go). Heard after b's own 00:00:24 started, that
// instant is overtaken with 00:00:23, both counted and logged: the gap
// starts at the last instant a says started, 00:00:21, not at 00:00:22.
func TestGapOvertakenCountsARefusedInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "fin", Schedule: "* * * * * *", Shell: "x", RerunInterrupted: true}
		b, f, logs := overtakenAt24(ctx, t, spec, 0)
		require.NoError(t, b.AdoptLedgerFrom("c", HoldsNothing, ledgerOf("fin", minute(0).Add(22*time.Second), OutcomeRefused, 1)))
		time.Sleep(minute(0).Add(26*time.Second + 500*time.Millisecond).Sub(time.Now()))
		synctest.Wait()

		assert.Equal(t, []string{"2000-01-01T00:00:24Z", "2000-01-01T00:00:25Z", "2000-01-01T00:00:26Z"}, f.scheduled("fin"))
		if l := logs.find("jobs: instants missed during failover; overtaken by a later instant already started"); assert.Len(t, l, 1) {
			assert.Equal(t, "2000-01-01 00:00:23 +0000 UTC", l[0]["scheduled_at"])
			assert.Equal(t, "2", l[0]["count"], "00:00:22 and 00:00:23")
		}
		assert.Empty(t, logs.find("jobs: previous leader's run was interrupted; not running it again: a later instant already started"))
		assert.Equal(t, uint64(2), b.Snapshot()[0].Skipped.Misfired)
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}

// overtakenAt24 is the case's common part: b has heard a's run of
// 00:00:21, leads from 00:00:23.905 under term 2 and has run 00:00:24; it
// is 00:00:24.300.
func overtakenAt24(ctx context.Context, t *testing.T, spec Spec, holdLapse time.Duration) (*Runner, *fakeExec, *logSink) {
	logs := &logSink{}
	f := &fakeExec{}
	b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: time.Second,
		HoldLapse: holdLapse, Logger: slog.New(logs)}, f)
	time.Sleep(21*time.Second + 300*time.Millisecond)
	require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, ledgerOf("fin", minute(0).Add(21*time.Second), OutcomeOK, 1)))
	time.Sleep(minute(0).Add(23*time.Second + 905*time.Millisecond).Sub(time.Now()))
	newFakeElector(ctx, "b", b.Callbacks()).lead(2)
	time.Sleep(minute(0).Add(24*time.Second + 300*time.Millisecond).Sub(time.Now()))
	require.Equal(t, []string{"2000-01-01T00:00:24Z"}, f.scheduled("fin"))
	return b, f, logs
}

func gapOvertakenConcludes(t *testing.T, rerun bool) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "fin", Schedule: "* * * * * *", Shell: "x", RerunInterrupted: rerun}
		b, f, logs := overtakenAt24(ctx, t, spec, 0)
		require.NoError(t, b.AdoptLedgerFrom("c", HoldsNothing, ledgerOf("fin", minute(0).Add(22*time.Second), OutcomeRunning, 1)))
		time.Sleep(minute(0).Add(26*time.Second + 500*time.Millisecond).Sub(time.Now()))
		synctest.Wait()

		assert.Equal(t, []string{"2000-01-01T00:00:24Z", "2000-01-01T00:00:25Z", "2000-01-01T00:00:26Z"}, f.scheduled("fin"))
		if l := logs.find("jobs: previous leader's run was interrupted; not running it again: a later instant already started"); assert.Len(t, l, 1) {
			assert.Equal(t, "2000-01-01 00:00:22 +0000 UTC", l[0]["scheduled_at"])
			assert.Equal(t, "1", l[0]["started_term"])
		}
		if l := logs.find("jobs: instants missed during failover; overtaken by a later instant already started"); assert.Len(t, l, 1) {
			assert.Equal(t, "2000-01-01 00:00:23 +0000 UTC", l[0]["scheduled_at"])
			assert.Equal(t, "1", l[0]["count"])
		}
		recs := termRecords(b, "fin", 1) // 00:00:21 heard ok, 00:00:22 concluded
		if assert.Len(t, recs, 2) {
			assert.Equal(t, minute(0).Add(22*time.Second), recs[0].ScheduledAt)
			assert.Equal(t, OutcomeInterrupted, recs[0].Outcome)
		}
		assert.Equal(t, uint64(1), b.Snapshot()[0].Skipped.Misfired)
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}

func gapOvertakenHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "fin", Schedule: "* * * * * *", Shell: "x", OnLeaderLoss: LeaderLossFinish}
		b, _, logs := overtakenAt24(ctx, t, spec, 2*time.Second)
		require.NoError(t, b.AdoptLedgerFrom("a", HoldsMarked, heldLedgerOf("fin", minute(0).Add(22*time.Second), 1)))
		time.Sleep(minute(0).Add(25*time.Second + 500*time.Millisecond).Sub(time.Now()))
		synctest.Wait()

		assert.Empty(t, logs.find("jobs: previous leader's run was interrupted; not running it again: a later instant already started"))
		for _, rec := range termRecords(b, "fin", 1) {
			assert.NotEqual(t, OutcomeInterrupted, rec.Outcome, "%v", rec.ScheduledAt)
		}
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}
