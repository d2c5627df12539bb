package jobs

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/internal/proc"
)

// Holds that end without an outcome (holds.go): the holder says it runs
// nothing while the run still reads running, typically because it
// restarted. In each test a leads term 1 and runs m's 00:01:00 instant
// (150 s long), is deposed at 00:01:30 and holds it; b leads term 2 and has
// decided its takeover by 00:01:40.

// heldThrough40 starts the handover and returns at 00:01:40 with b holding
// a's run and a's messages cut off: whatever a says next is up to the test.
func heldThrough40(t *testing.T, ctx context.Context, spec Spec) *handover {
	h := newHandover(t, ctx, spec)
	time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
	h.depose()
	time.Sleep(10 * time.Second)
	synctest.Wait()
	require.Empty(t, h.fb.all(), "b holds a's run")
	h.cut.Store(true)
	return h
}

const releasedWarn = "jobs: node running this job no longer runs it and sent no outcome; run interrupted, "

// a restarts (a new process that never ran the run) and says so at
// 00:01:41, with the ledger its state file gave back (still running) or
// with none: the run died with a's previous process, and is gone a kill's
// settling time after (proc.KillSettle; udptest TestQuorumStallAfterFireStorm
// -sim.holds seed 19 concluded it 156 ms after the crash). b counts it
// interrupted then, at 00:01:42, not at once nor at the lapse (00:01:50),
// names a, records it, and runs it again if the job says so.
func TestHandoverHolderRestartedRunIsInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rerun   bool
		restart []byte // a's first ledger after its restart
		warn    string
	}{
		{"restored ledger, rerun_interrupted", true, ledgerOf("m", minute(1), OutcomeRunning, 1),
			releasedWarn + "running it again (rerun_interrupted)"},
		{"restored ledger", false, ledgerOf("m", minute(1), OutcomeRunning, 1),
			releasedWarn + "not running it again"},
		{"no state dir", false, Ledger{}.Encode(), releasedWarn + "not running it again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				h := heldThrough40(t, ctx, holdJob(OverlapSkip, tc.rerun))
				time.Sleep(time.Second) // 00:01:41
				require.NoError(t, h.b.AdoptLedgerFrom("a", HoldsNothing, tc.restart))
				synctest.Wait()
				assert.Empty(t, h.logs.find(tc.warn), "not while the run of a's previous process may still be settling")
				time.Sleep(proc.KillSettle - time.Millisecond)
				synctest.Wait()
				assert.Empty(t, h.fb.all(), "no rerun while the run of a's previous process may still be settling")
				time.Sleep(time.Millisecond)
				synctest.Wait()

				warns := h.logs.find(tc.warn)
				require.Len(t, warns, 1, "a kill's settling time after a said so, not at the lapse")
				assert.Equal(t, "a", warns[0]["node"])
				assert.Equal(t, "m", warns[0]["job"])
				assert.Equal(t, minute(1).String(), warns[0]["scheduled_at"])
				assert.Empty(t, h.logs.find("jobs: node running this job is no longer heard; run interrupted, not running it again"))
				heard := h.b.History().Runs("m", 0)
				require.NotEmpty(t, heard)
				assert.Equal(t, RunRecord{Job: "m", ScheduledAt: minute(1), Term: 1, Outcome: OutcomeInterrupted,
					Node: "a", Heard: true, ExitCode: -1}, heard[len(heard)-1])
				if tc.rerun {
					calls := h.fb.all()
					require.Len(t, calls, 1)
					assert.Equal(t, minute(1).Add(41*time.Second+proc.KillSettle), calls[0].At.UTC(),
						"rerun a kill's settling time after a said so")
					assert.Equal(t, []string{"2000-01-01T00:01:00Z"}, h.fb.scheduled("m"))
				} else {
					l := h.b.Snapshot()[0].Ledger
					require.NotNil(t, l)
					assert.Equal(t, LedgerEntry{JobID: JobIDOf("m"), Instant: minute(1), Outcome: OutcomeInterrupted, Term: 1}, *l)
					time.Sleep(minute(2).Sub(time.Now()) + time.Second)
					synctest.Wait()
					assert.Equal(t, []string{"2000-01-01T00:02:00Z"}, h.fb.scheduled("m"), "the next instant is not held back")
				}
				h.stop(cancel)
			})
		})
	}
}

// A release that comes while b still gathers (until 00:01:35) waits for
// the takeover decision, like every word about instants before it: a
// peer's ledger with the run's outcome, heard in the window, stops the
// rerun.
func TestReleaseWhileGatheringWaitsForTheTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		h := newHandover(t, ctx, holdJob(OverlapSkip, true))
		time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
		h.depose()
		time.Sleep(1500 * time.Millisecond) // held from 00:01:31
		synctest.Wait()
		h.cut.Store(true)
		require.NoError(t, h.b.AdoptLedgerFrom("a", HoldsNothing, Ledger{}.Encode()))
		synctest.Wait()
		assert.Empty(t, h.fb.all(), "not while gathering")
		time.Sleep(time.Second)
		require.NoError(t, h.b.AdoptLedgerFrom("c", HoldsNothing, ledgerOf("m", minute(1), OutcomeOK, 1)))
		time.Sleep(5 * time.Second) // 00:01:37
		synctest.Wait()

		assert.Empty(t, h.fb.all(), "the outcome was heard in time")
		assert.Equal(t, OutcomeOK, h.b.Snapshot()[0].Ledger.Outcome)
		assert.Empty(t, h.logs.find(releasedWarn+"running it again (rerun_interrupted)"))
		assert.Empty(t, h.logs.find("jobs: previous leader's run was interrupted; running it again (rerun_interrupted)"))
		h.stop(cancel)
	})
}

// After a released a's run: a copy of its old ledger, marked holding (a
// packet of the old process, a restored ledger sent while holding another
// run), makes no hold, so 00:02:00 is not skipped; a third node's relay of
// the running entry does not take the run back; a's own outcome heard late
// replaces b's conclusion, and nothing stale takes that back either.
func TestReleasedRunIsNotTakenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		h := heldThrough40(t, ctx, holdJob(OverlapSkip, false))
		running := ledgerOf("m", minute(1), OutcomeRunning, 1)
		entry := func() Outcome {
			l := h.b.Snapshot()[0].Ledger
			require.NotNil(t, l)
			require.True(t, l.Instant.Equal(minute(1)), "%+v", l)
			return l.Outcome
		}
		time.Sleep(time.Second)
		require.NoError(t, h.b.AdoptLedgerFrom("a", HoldsNothing, running))
		time.Sleep(proc.KillSettle) // the run of a's previous process is gone
		synctest.Wait()
		require.Equal(t, OutcomeInterrupted, entry())

		time.Sleep(13 * time.Second) // 00:01:55: held until 00:02:05 if it made a hold
		require.NoError(t, h.b.AdoptLedgerFrom("a", HoldsMarked, heldLedgerOf("m", minute(1), 1)))
		require.NoError(t, h.b.AdoptLedgerFrom("c", HoldsNothing, running))
		synctest.Wait()
		assert.Equal(t, OutcomeInterrupted, entry(), "a relay does not take it back")
		holds := h.logs.find("jobs: a run of this job is still going on another node")
		assert.Len(t, holds, 1, "only the first hold")

		require.NoError(t, h.b.AdoptLedgerFrom("a", HoldsNothing, ledgerOf("m", minute(1), OutcomeOK, 1)))
		assert.Equal(t, OutcomeOK, entry(), "the run's own outcome, heard late")
		for _, o := range []Outcome{OutcomeRunning, OutcomeInterrupted} {
			require.NoError(t, h.b.AdoptLedgerFrom("c", HoldsNothing, ledgerOf("m", minute(1), o, 1)))
			assert.Equal(t, OutcomeOK, entry(), "a stale %v from c", o)
		}
		runs := h.b.History().Runs("m", 0)
		require.Len(t, runs, 1)
		assert.Equal(t, OutcomeOK, runs[0].Outcome)

		time.Sleep(minute(2).Sub(time.Now()) + time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"2000-01-01T00:02:00Z"}, h.fb.scheduled("m"), "not skipped for a stale hold")
		assert.Zero(t, h.b.Snapshot()[0].Skipped.Overlap)
		h.stop(cancel)
	})
}

// A holder cut off for less than the hold lapse keeps its hold, whatever
// other nodes relay meanwhile (their copy of its running entry, unmarked,
// is not its word): b runs nothing beside it, reruns nothing, and records
// its outcome once it ends.
func TestHandoverHolderCutOffBrieflyKeepsItsHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		h := heldThrough40(t, ctx, holdJob(OverlapSkip, true))
		time.Sleep(2 * time.Second)
		require.NoError(t, h.b.AdoptLedgerFrom("c", HoldsNothing, ledgerOf("m", minute(1), OutcomeRunning, 1)))
		require.NoError(t, h.b.AdoptLedgerFrom("c", HoldsNothing, Ledger{}.Encode()))
		time.Sleep(3 * time.Second)
		h.cut.Store(false) // 00:01:45, healed before the lapse
		time.Sleep(minute(4).Sub(time.Now()) + time.Second)
		synctest.Wait()

		assert.Equal(t, []string{"2000-01-01T00:04:00Z"}, h.fb.scheduled("m"), "no rerun, 00:02 and 00:03 skipped")
		assert.False(t, runsOverlap(h.fa.all(), h.fb.all()))
		assert.Equal(t, uint64(2), h.b.Snapshot()[0].Skipped.Overlap)
		h.logs.mu.Lock()
		for _, r := range h.logs.records {
			assert.NotContains(t, r["msg"], "interrupted", "%v", r)
		}
		h.logs.mu.Unlock()
		runs := h.b.History().Runs("m", 0)
		require.NotEmpty(t, runs)
		assert.Equal(t, OutcomeOK, runs[len(runs)-1].Outcome, "a's outcome: %+v", runs)
		h.stop(cancel)
	})
}

// The holder's message without the mark that deposes b (its heartbeat as
// leader of term 3: CanRun is false by the time b's runner hears it) is no
// release: its run goes on, b concludes nothing, and a marked word of the
// holder, deposed again, holds the run again.
func TestHolderLeadingAgainDoesNotReleaseItsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		h := heldThrough40(t, ctx, holdJob(OverlapSkip, true))
		running := heldLedgerOf("m", minute(1), 1) // a runs it
		time.Sleep(time.Second)
		h.bDeposed.Store(true)
		require.NoError(t, h.b.AdoptLedgerFrom("a", SaysNoHolds, running))
		synctest.Wait()
		h.eb.follow("a", 3)
		synctest.Wait()
		assert.Empty(t, h.logs.find(releasedWarn+"running it again (rerun_interrupted)"))
		assert.Empty(t, h.fb.all())
		assert.Equal(t, OutcomeRunning, h.b.Snapshot()[0].Ledger.Outcome)

		time.Sleep(time.Second) // a deposed again, by b (term 4)
		h.bDeposed.Store(false)
		require.NoError(t, h.b.AdoptLedgerFrom("a", HoldsMarked, running))
		h.b.mu.Lock()
		_, held := h.b.heldLocked(h.b.jobs[0], time.Now())
		h.b.mu.Unlock()
		assert.True(t, held, "held again")
		h.stop(cancel)
	})
}

// A manual run held elsewhere whose holder restarts is interrupted too,
// a kill's settling time after, and never run again.
func TestHandoverHeldManualRunReleasedIsInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		h := heldThrough40(t, ctx, holdJob(OverlapSkip, true))
		manual := LedgerEntry{JobID: ManualJobIDOf("m"), Instant: minute(1).Add(20 * time.Second), Outcome: OutcomeRunning,
			Term: 1, Held: true}
		both := Ledger{Entries: []LedgerEntry{
			{JobID: JobIDOf("m"), Instant: minute(1), Outcome: OutcomeOK, Term: 1}, manual}}
		time.Sleep(time.Second)
		require.NoError(t, h.b.AdoptLedgerFrom("a", HoldsMarked, both.Encode()))
		synctest.Wait()
		_, err := h.b.Trigger("m")
		require.ErrorIs(t, err, ErrOverlap, "the manual run is held")
		time.Sleep(time.Second)
		require.NoError(t, h.b.AdoptLedgerFrom("a", HoldsNothing, Ledger{}.Encode())) // 00:01:42: a restarted
		synctest.Wait()
		_, err = h.b.Trigger("m")
		require.ErrorIs(t, err, ErrOverlap, "held while the run of a's previous process may still be settling")
		time.Sleep(proc.KillSettle)
		synctest.Wait()

		warns := h.logs.find(releasedWarn[:len(releasedWarn)-len("run interrupted, ")] + "manual run interrupted")
		require.Len(t, warns, 1)
		assert.Equal(t, "a", warns[0]["node"])
		assert.Equal(t, "true", warns[0]["manual"])
		assert.Equal(t, manual.Instant.String(), warns[0]["scheduled_at"])
		l, err := DecodeLedger(h.b.Ledger())
		require.NoError(t, err)
		want := manual
		want.Outcome, want.Held = OutcomeInterrupted, false
		assert.Contains(t, l.Entries, want)
		assert.Empty(t, h.fb.all(), "a manual run is not run again")
		_, err = h.b.Trigger("m")
		assert.NoError(t, err, "no longer held")
		h.stop(cancel)
	})
}

// A marked ledger that leaves a held run out to fit (truncated) says
// nothing about it; one that is whole and does not name it running
// releases it. A node that does not lead only notes the release: its
// takeover counts the run interrupted, naming the holder.
func TestHoldReleaseNeedsTheHoldersWord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		logs := &logSink{}
		r := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{holdJob(OverlapSkip, false), {Name: "n", Schedule: "@every 1h", Shell: "x"}},
			HoldLapse: time.Hour, Gather: time.Second, Logger: slog.New(logs)}, &fakeExec{})
		el := newFakeElector(ctx, "b", r.Callbacks())
		el.follow("a", 1)
		synctest.Wait()
		j := r.jobs[0]
		held := func() bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			_, ok := r.heldLocked(j, time.Now())
			return ok
		}
		other := LedgerEntry{JobID: JobIDOf("n"), Instant: minute(0), Outcome: OutcomeRunning, Term: 1, Held: true}
		require.NoError(t, r.AdoptLedgerFrom("a", HoldsMarked, heldLedgerOf("m", minute(0), 1)))
		require.True(t, held())
		require.NoError(t, r.AdoptLedgerFrom("a", HoldsMarked, Ledger{Entries: []LedgerEntry{other}, Truncated: true}.Encode()))
		assert.True(t, held(), "left out of a truncated ledger")
		require.NoError(t, r.AdoptLedgerFrom("a", HoldsMarked, Ledger{Entries: []LedgerEntry{other,
			{JobID: JobIDOf("m"), Instant: minute(0), Outcome: OutcomeRunning, Term: 1, Held: true}}}.Encode()))
		require.NoError(t, r.AdoptLedgerFrom("a", HoldsMarked, Ledger{Entries: []LedgerEntry{other}}.Encode()))
		assert.True(t, held(), "a whole ledger that does not name it: the run may still be settling")
		time.Sleep(proc.KillSettle)
		assert.False(t, held(), "a whole ledger that does not name it")
		assert.Equal(t, OutcomeRunning, r.Snapshot()[0].Ledger.Outcome, "not leading: nothing concluded yet")

		el.lead(2)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, OutcomeInterrupted, r.Snapshot()[0].Ledger.Outcome)
		warns := logs.find("jobs: previous leader's run was interrupted; not running it again")
		require.Len(t, warns, 1)
		assert.Equal(t, "a", warns[0]["node"])
	})
}

// A holder that leads again and then pauses keeps its hold (simulator,
// -sim.holds, TestQuorumStallAfterFireStorm seed 120): a, deposed while
// its run goes on, leads term 3; b, following it, hears its heartbeats,
// which speak of no holds (a leader's runs are its own) and so release
// nothing. a pauses (cut off) and b takes over (term 4): a's run may still
// be going (its timeout bounds it), so b neither concludes it on a's word
// nor reruns it beside it, and skips the instants due meanwhile (quorum
// mode: no leader acts beyond its lease).
func TestHolderLeadingAgainThenPausedKeepsItsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := holdJob(OverlapSkip, true)
		spec.Timeout = 3 * time.Minute
		h := newHandoverIn(t, ctx, spec, quorumSuccession)
		time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
		h.depose()
		time.Sleep(10 * time.Second) // 00:01:40: b holds a's run
		synctest.Wait()
		require.Empty(t, h.fb.all(), "b holds a's run")

		h.bLead.Store(false) // a leads again: its heartbeats reach b
		h.eb.follow("a", 3)
		h.ea.lead(3)
		time.Sleep(5 * time.Second)
		synctest.Wait()

		h.cut.Store(true) // 00:01:45: a pauses; b takes over
		h.bLead.Store(true)
		h.ea.follow("b", 4)
		h.eb.lead(4)
		time.Sleep(minute(3).Sub(time.Now()) + 40*time.Second)
		synctest.Wait()

		assert.Empty(t, h.logs.find(releasedWarn+"running it again (rerun_interrupted)"))
		assert.Empty(t, h.logs.find("jobs: previous leader's run was interrupted; running it again (rerun_interrupted)"))
		assert.Empty(t, h.fb.all(), "b starts nothing while a's run may go on")
		assert.False(t, runsOverlap(h.fa.all(), h.fb.all()))
		h.stop(cancel)
	})
}
