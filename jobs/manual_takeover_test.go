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

const manualInterruptedWarn = "jobs: previous leader's manual run was interrupted; not running it again (manual runs never are)"

// manualEntry returns r's entry for job's manual runs, as it knows it
// (not whose run it is: Held cleared).
func manualEntry(t *testing.T, r *Runner, job string) (LedgerEntry, bool) {
	t.Helper()
	l, err := DecodeLedger(r.StateLedger())
	require.NoError(t, err)
	for _, e := range l.Entries {
		if e.JobID == ManualJobIDOf(job) {
			e.Held = false
			return e, true
		}
	}
	return LedgerEntry{}, false
}

// manualRecords returns the manual runs in r's history of job.
func manualRecords(r *Runner, job string) []RunRecord {
	var out []RunRecord
	for _, rec := range r.History().Runs(job, 0) {
		if rec.Manual {
			out = append(out, rec)
		}
	}
	return out
}

// A leader triggers a manual run and dies while leading: nobody holds the
// run. The next leader's takeover (after its gathering window) concludes
// it interrupted — ledger, history, a WARN naming job, node and instant —
// and never runs it again, rerun_interrupted or not; a follower learns it
// from the new leader's heartbeat. Neither the old leader's new process
// (its state file gives the run back) nor a follower's stale copy takes
// it back, and the new leader restarting does not conclude it twice.
func TestTakeoverConcludesADeadLeadersManualRun(t *testing.T) {
	for _, rerun := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "rerun_interrupted"}[rerun], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				spec := Spec{Name: "m", Schedule: "0 * * * *", Shell: "x", RerunInterrupted: rerun}
				cl := newTakeoverCluster(ctx, t, spec)
				a, b, c, ea, eb, ec := cl.a, cl.b, cl.c, cl.ea, cl.eb, cl.ec
				f, logs, node, set := cl.exec, cl.logs, cl.node, cl.net.set
				time.Sleep(10 * time.Second)
				rec, err := a.Trigger("m")
				require.NoError(t, err)
				time.Sleep(5 * time.Second) // 00:00:15: b and c heard it
				running := LedgerEntry{JobID: ManualJobIDOf("m"), Instant: rec.ScheduledAt, Outcome: OutcomeRunning, Term: 1, Stop: defaultStop}
				restored := a.StateLedger() // a's state file
				got, ok := manualEntry(t, b, "m")
				require.True(t, ok)
				require.Equal(t, running, got)

				set(nil, b, c) // a dies, leading
				ea.follow("", 1)
				time.Sleep(3 * time.Second)
				set(b, b, c)
				eb.lead(2)
				ec.follow("b", 2)
				time.Sleep(4 * time.Second)
				synctest.Wait()
				got, _ = manualEntry(t, b, "m")
				assert.Equal(t, running, got, "not while gathering")

				time.Sleep(2 * time.Second) // b's window ended at 00:00:23
				synctest.Wait()
				interrupted := running
				interrupted = interrupted.ended(OutcomeInterrupted)
				got, _ = manualEntry(t, b, "m")
				assert.Equal(t, interrupted, got)
				warns := logs.find(manualInterruptedWarn)
				require.Len(t, warns, 1)
				assert.Equal(t, "m", warns[0]["job"])
				assert.Equal(t, "a", warns[0]["node"])
				assert.Equal(t, rec.ScheduledAt.String(), warns[0]["scheduled_at"])
				assert.Equal(t, "1", warns[0]["started_term"])
				want := RunRecord{Job: "m", ScheduledAt: rec.ScheduledAt, Term: 1, Outcome: OutcomeInterrupted,
					Node: "a", Manual: true, Heard: true, ExitCode: -1}
				assert.Equal(t, []RunRecord{want}, manualRecords(b, "m"))
				assert.Equal(t, []RunRecord{want}, manualRecords(c, "m"), "c heard it from b")
				got, _ = manualEntry(t, c, "m")
				assert.Equal(t, interrupted, got)

				// a restarts: its state file says running; it follows b
				// and passes on what it knows; c relays a stale copy.
				a2 := node("a", nil)
				require.NoError(t, a2.AdoptLedger(restored))
				ea2 := newFakeElector(ctx, "a", a2.Callbacks())
				ea2.follow("b", 2)
				set(b, b, c, a2)
				require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, a2.Ledger()))
				require.NoError(t, b.AdoptLedgerFrom("c", HoldsNothing, Ledger{Entries: []LedgerEntry{running}}.Encode()))
				time.Sleep(5 * time.Second)
				synctest.Wait()
				for _, r := range []*Runner{b, c, a2} {
					got, _ = manualEntry(t, r, "m")
					assert.Equal(t, interrupted, got, "%s", r.cfg.Node)
				}

				// b restarts (its state file) and leads again: nothing more.
				logs2 := &logSink{}
				b2 := node("b", slog.New(logs2))
				require.NoError(t, b2.AdoptLedger(b.StateLedger())) // b's state file
				set(nil, c, a2)
				eb.follow("", 2)
				eb2 := newFakeElector(ctx, "b", b2.Callbacks())
				set(b2, b2, c, a2)
				eb2.lead(4)
				time.Sleep(10 * time.Second)
				synctest.Wait()
				got, _ = manualEntry(t, b2, "m")
				assert.Equal(t, interrupted, got)
				assert.Empty(t, logs2.find(manualInterruptedWarn))

				assert.Len(t, f.all(), 1, "the manual run is never run again")
				cancel()
				cl.wg.Wait()
				for _, r := range []*Runner{a, b, c, a2, b2} {
					require.NoError(t, r.Wait(context.Background()))
				}
			})
		})
	}
}

// A deposed leader that still runs its manual run (on_leader_loss:
// finish) holds it: the new leader's takeover leaves it running, refuses
// a trigger (overlap: skip), and takes the holder's outcome when the run
// ends; nothing is concluded interrupted.
func TestTakeoverLeavesAHeldManualRunRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		h := newHandover(t, ctx, holdJob(OverlapSkip, true))
		time.Sleep(20 * time.Second)
		rec, err := h.a.Trigger("m") // 00:00:20, 150 s: until 00:02:50
		require.NoError(t, err)
		time.Sleep(10 * time.Second)
		h.depose() // 00:00:30
		time.Sleep(10 * time.Second)
		synctest.Wait()

		running := LedgerEntry{JobID: ManualJobIDOf("m"), Instant: rec.ScheduledAt, Outcome: OutcomeRunning, Term: 1, Stop: stopUnbounded}
		got, ok := manualEntry(t, h.b, "m")
		require.True(t, ok)
		assert.Equal(t, running, got, "held: not concluded at the takeover")
		_, err = h.b.Trigger("m")
		assert.ErrorIs(t, err, ErrOverlap)

		time.Sleep(minute(3).Sub(time.Now()))
		synctest.Wait()
		got, _ = manualEntry(t, h.b, "m")
		assert.Equal(t, OutcomeOK, got.Outcome, "the holder's outcome")
		assert.Empty(t, h.logs.find(manualInterruptedWarn))
		assert.Empty(t, h.logs.find("jobs: node running this job is no longer heard; manual run interrupted"))
		h.stop(cancel)
	})
}

// A leader deposed while its manual run goes on (on_leader_loss: finish)
// that leads again before the run ends runs it itself: its takeover leaves
// it running, and the run's own outcome ends it.
func TestTakeoverLeavesItsOwnManualRunRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		logs := &logSink{}
		a := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{holdJob(OverlapSkip, false)}, Gather: 5 * time.Second,
			HoldLapse: holdLapseForTest, Logger: slog.New(logs)}, &fakeExec{behave: sleepFor(time.Minute, 0)})
		ea := newFakeElector(ctx, "a", a.Callbacks())
		ea.lead(1)
		time.Sleep(10 * time.Second)
		rec, err := a.Trigger("m")
		require.NoError(t, err)
		synctest.Wait() // the run goes on
		ea.follow("b", 2)
		time.Sleep(5 * time.Second)
		ea.lead(3)
		time.Sleep(10 * time.Second) // 00:00:25: a's window is over
		synctest.Wait()

		got, ok := manualEntry(t, a, "m")
		require.True(t, ok)
		assert.Equal(t, LedgerEntry{JobID: ManualJobIDOf("m"), Instant: rec.ScheduledAt, Outcome: OutcomeRunning, Term: 1, Stop: stopUnbounded}, got)
		assert.Empty(t, logs.find(manualInterruptedWarn))
		time.Sleep(time.Minute)
		synctest.Wait()
		got, _ = manualEntry(t, a, "m")
		assert.Equal(t, OutcomeOK, got.Outcome)
		cancel()
		require.NoError(t, a.Wait(context.Background()))
	})
}

// The leader that triggered a manual run restarts (its state file gives
// the run back, running, marked as its own) and leads again: its new
// process never ran it, so its takeover concludes it, naming itself (the
// state file said it led that term), and does not run it.
func TestRestartedLeaderConcludesItsPreviousProcesssManualRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		logs := &logSink{}
		f := &fakeExec{}
		a := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{holdJob(OverlapSkip, true)}, Gather: 5 * time.Second,
			HoldLapse: holdLapseForTest, Logger: slog.New(logs)}, f)
		running := LedgerEntry{JobID: ManualJobIDOf("m"), Instant: minute(0).Add(10 * time.Second), Outcome: OutcomeRunning, Term: 1}
		disk := running
		disk.Held = true // a started it
		require.NoError(t, a.RestoreLedger(Ledger{Entries: []LedgerEntry{disk}}.Encode()))
		time.Sleep(20 * time.Second)
		newFakeElector(ctx, "a", a.Callbacks()).lead(3)
		time.Sleep(6 * time.Second)
		synctest.Wait()

		got, ok := manualEntry(t, a, "m")
		require.True(t, ok)
		want := running
		want.Outcome = OutcomeInterrupted
		assert.Equal(t, want, got)
		warns := logs.find(manualInterruptedWarn)
		require.Len(t, warns, 1)
		assert.Equal(t, "a", warns[0]["node"])
		assert.Equal(t, []RunRecord{{Job: "m", ScheduledAt: running.Instant, Term: 1, Outcome: OutcomeInterrupted,
			Node: "a", Manual: true, Heard: true, ExitCode: -1}}, manualRecords(a, "m"))
		assert.Empty(t, f.all(), "not run again (and no scheduled instant fell due)")
		cancel()
		require.NoError(t, a.Wait(context.Background()))
	})
}
