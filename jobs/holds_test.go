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

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/proc"
)

// handover is two Runners, a and b, joined the way the udp elector joins
// them: a leads term 1 (its ledger reaches b on every heartbeat, once per
// second), then is deposed without stopping and follows b (term 2). While
// a holds runs (OnHolding) its ledger reaches b, marked holding, on every
// heartbeat of b, and once more, unmarked, when it stops holding. cut
// drops everything a sends.
type handover struct {
	t     *testing.T
	a, b  *Runner
	fa    *fakeExec
	fb    *fakeExec
	ea    *fakeElector
	eb    *fakeElector
	logs  *logSink
	bLead atomic.Bool
	// bDeposed makes b's CanRun false, as the udp elector's is once a
	// higher term's message has deposed it.
	bDeposed atomic.Bool
	hold     atomic.Bool
	cut      atomic.Bool
	// release carries a's release (OnHolding(false)) to the network.
	release chan struct{}
	wg      sync.WaitGroup
}

// holdJob is a job that outlives a step-down: every minute, 150 s long
// (so it covers the next two instants), on_leader_loss: finish.
func holdJob(overlap Overlap, rerun bool) Spec {
	return Spec{Name: "m", Schedule: "* * * * *", Shell: "x", Overlap: overlap,
		OnLeaderLoss: LeaderLossFinish, RerunInterrupted: rerun}
}

const holdLapseForTest = 10 * time.Second

func newHandover(t *testing.T, ctx context.Context, spec Spec) *handover {
	return newHandoverIn(t, ctx, spec, election.Succession{})
}

// newHandoverIn is newHandover in a mode whose successions are s (quorum
// mode's bound when a deposed leader's runs can still be going).
func newHandoverIn(t *testing.T, ctx context.Context, spec Spec, s election.Succession) *handover {
	h := &handover{t: t, fa: &fakeExec{behave: sleepFor(150*time.Second, 0)},
		fb: &fakeExec{behave: sleepFor(150*time.Second, 0)}, logs: &logSink{}, release: make(chan struct{}, 8)}
	h.a = newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{spec}, Gather: 5 * time.Second,
		HoldLapse: holdLapseForTest,
		OnHolding: func(on bool) {
			h.hold.Store(on)
			if !on {
				h.release <- struct{}{}
			}
		}}, h.fa)
	h.b = newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: 5 * time.Second,
		HoldLapse: holdLapseForTest, Logger: slog.New(h.logs), CanRun: func() bool { return !h.bDeposed.Load() },
		Succession: s}, h.fb)
	h.ea = newFakeElector(ctx, "a", h.a.Callbacks())
	h.eb = newFakeElector(ctx, "b", h.b.Callbacks())
	h.ea.lead(1)
	h.eb.follow("a", 1)
	h.wg.Go(func() { h.network(ctx) })
	return h
}

// network delivers a's ledger to b as the udp elector would.
func (h *handover) network(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.release:
			if !h.cut.Load() {
				require.NoError(h.t, h.b.AdoptLedgerFrom("a", HoldsNothing, h.a.Ledger()))
			}
		case <-tick.C:
			switch {
			case h.cut.Load():
			case !h.bLead.Load(): // a leads: its heartbeat
				require.NoError(h.t, h.b.AdoptLedgerFrom("a", SaysNoHolds, h.a.Ledger()))
			case h.hold.Load(): // a follows b, holding: on each of b's heartbeats
				require.NoError(h.t, h.b.AdoptLedgerFrom("a", HoldsMarked, h.a.Ledger()))
			}
		}
	}
}

// depose makes b lead term 2 and a follow it, a's runs going on.
func (h *handover) depose() {
	h.bLead.Store(true)
	h.ea.follow("b", 2)
	h.eb.lead(2)
}

func (h *handover) stop(cancel context.CancelFunc) {
	cancel()
	h.wg.Wait()
	require.NoError(h.t, h.a.Wait(context.Background()))
	require.NoError(h.t, h.b.Wait(context.Background()))
}

// runsOverlap reports whether a run of a and one of b were going at once
// (each run lasts 150 s unless it is still going at the end).
func runsOverlap(a, b []call) bool {
	for _, x := range a {
		for _, y := range b {
			if x.At.Before(y.At.Add(150*time.Second)) && y.At.Before(x.At.Add(150*time.Second)) {
				return true
			}
		}
	}
	return false
}

// overlap: skip holds across the handover: b does not mark a's run
// interrupted, does not run it again, skips the instants due while a still
// runs it (counted, WARN naming a), and starts the first one after a's
// outcome is heard.
func TestHandoverOverlapSkipWaitsForTheDeposedLeadersRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		h := newHandover(t, ctx, holdJob(OverlapSkip, true))
		time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
		h.depose() // 00:01:30, a's run of 00:01:00 goes on until 00:03:30
		time.Sleep(10 * time.Second)
		synctest.Wait()
		_, err := h.b.Trigger("m")
		assert.ErrorIs(t, err, ErrOverlap, "a manual run is refused too")
		time.Sleep(minute(4).Sub(time.Now()) + time.Second)
		synctest.Wait()

		assert.Equal(t, []string{"2000-01-01T00:01:00Z"}, h.fa.scheduled("m"))
		assert.Equal(t, []string{"2000-01-01T00:04:00Z"}, h.fb.scheduled("m"), "no rerun, 00:02 and 00:03 skipped")
		assert.False(t, runsOverlap(h.fa.all(), h.fb.all()))
		s := h.b.Snapshot()[0]
		assert.Equal(t, uint64(2), s.Skipped.Overlap)
		skips := h.logs.find("jobs: not starting: previous run still going on another node (overlap: skip)")
		require.Len(t, skips, 2)
		assert.Equal(t, "a", skips[0]["node"])
		assert.Empty(t, h.logs.find("jobs: previous leader's run was interrupted; running it again (rerun_interrupted)"))
		runs := h.b.History().Runs("m", 10)
		require.NotEmpty(t, runs)
		assert.Equal(t, OutcomeOK, runs[len(runs)-1].Outcome, "a's outcome heard: %+v", runs)
		h.stop(cancel)
	})
}

// overlap: allow lets b start the next instant beside a's run, and still
// does not rerun a's run.
func TestHandoverOverlapAllowStartsBesideTheDeposedLeadersRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		h := newHandover(t, ctx, holdJob(OverlapAllow, true))
		time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
		h.depose()
		time.Sleep(minute(2).Sub(time.Now()) + time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"2000-01-01T00:02:00Z"}, h.fb.scheduled("m"))
		assert.True(t, runsOverlap(h.fa.all(), h.fb.all()), "allow: side by side")
		assert.Zero(t, h.b.Snapshot()[0].Skipped.Overlap)
		h.stop(cancel)
	})
}

// A hold that lapses unrenewed (a is cut off) makes a's run interrupted at
// that point; with rerun_interrupted b runs it again, within misfire_grace;
// without, it runs the next instant.
func TestHandoverHoldLapses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rerun bool
		want  []string
	}{
		{"rerun_interrupted", true, []string{"2000-01-01T00:01:00Z"}},
		{"no rerun", false, []string{"2000-01-01T00:02:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				h := newHandover(t, ctx, holdJob(OverlapSkip, tc.rerun))
				time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
				h.depose()
				time.Sleep(10 * time.Second) // held through the gathering window
				synctest.Wait()
				assert.Empty(t, h.fb.all())
				h.cut.Store(true) // 00:01:40
				time.Sleep(minute(2).Sub(time.Now()) + time.Second)
				synctest.Wait()
				assert.Equal(t, tc.want, h.fb.scheduled("m"))
				warns := h.logs.find("jobs: node running this job is no longer heard; run interrupted, not running it again")
				if tc.rerun {
					warns = h.logs.find("jobs: node running this job is no longer heard; run interrupted, running it again (rerun_interrupted)")
					calls := h.fb.all()
					require.Len(t, calls, 1)
					lapse := calls[0].At.Sub(minute(1))
					assert.True(t, lapse > 40*time.Second && lapse <= 40*time.Second+holdLapseForTest,
						"rerun when the hold lapsed, not before: %v after the instant", lapse)
				}
				require.Len(t, warns, 1)
				assert.Equal(t, "a", warns[0]["node"])
				h.stop(cancel)
			})
		})
	}
}

// A follower relaying a pool, or a holder's entries it does not mark held
// (runs it only relays, whatever node's tag their term carries), never
// make a hold; a message of the holder without the mark ends its holds.
func TestHoldsComeOnlyFromTheirHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		r := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{holdJob(OverlapSkip, true)}, HoldLapse: time.Minute}, nil)
		el := newFakeElector(ctx, "b", r.Callbacks())
		el.follow("a", 1)
		synctest.Wait()
		j := r.jobs[0]
		run := LedgerEntry{JobID: JobIDOf("m"), Instant: minute(0), Outcome: OutcomeRunning, Term: 1}
		running := Ledger{Entries: []LedgerEntry{run}}.Encode()
		run.Held = true
		runs := Ledger{Entries: []LedgerEntry{run}}.Encode()
		held := func() bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			_, ok := r.heldLocked(j, time.Now())
			return ok
		}
		require.NoError(t, r.AdoptLedgerFrom("c", HoldsMarked, running))
		assert.False(t, held(), "c holds, but relays this run: not marked held")
		require.NoError(t, r.AdoptLedgerFrom("a", SaysNoHolds, runs))
		assert.False(t, held(), "a leads: its runs are its own")
		require.NoError(t, r.AdoptLedgerFrom("a", HoldsMarked, runs))
		assert.True(t, held())
		require.NoError(t, r.AdoptLedgerFrom("c", HoldsNothing, running))
		assert.True(t, held(), "another node's word changes nothing")
		require.NoError(t, r.AdoptLedgerFrom("a", HoldsMarked, running))
		assert.True(t, held(), "a no longer says it runs it: it may still be settling")
		time.Sleep(proc.KillSettle)
		assert.False(t, held(), "a no longer says it runs it")
		require.NoError(t, r.AdoptLedgerFrom("a", HoldsMarked, runs))
		require.True(t, held())
		require.NoError(t, r.AdoptLedgerFrom("a", HoldsNothing, runs))
		time.Sleep(proc.KillSettle)
		assert.False(t, held(), "a runs nothing now")
		require.NoError(t, r.AdoptLedgerFrom("a", HoldsMarked, runs))
		time.Sleep(time.Minute)
		assert.False(t, held(), "lapsed")

		// A manual run held elsewhere counts too (overlap spans both).
		manual := Ledger{Entries: []LedgerEntry{{JobID: ManualJobIDOf("m"), Instant: minute(2), Outcome: OutcomeRunning,
			Term: 1, Held: true}}}
		require.NoError(t, r.AdoptLedgerFrom("c", HoldsMarked, manual.Encode()))
		assert.True(t, held())
	})
}
