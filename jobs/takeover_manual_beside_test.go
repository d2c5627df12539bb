package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scheduledRecords returns the scheduled runs in r's history of job.
func scheduledRecords(r *Runner, job string) []RunRecord {
	var out []RunRecord
	for _, rec := range r.History().Runs(job, 0) {
		if !rec.Manual {
			out = append(out, rec)
		}
	}
	return out
}

// a leads term 1 and dies with m's 00:00 run going. b takes over (term 2)
// and a user triggers m on b within b's gathering window: b's manual run
// is no run of that instant, so the takeover still concludes a's run
// interrupted (ledger, history) and, with rerun_interrupted, runs it
// again beside the manual one (overlap: allow).
func TestManualRunDuringGatherDoesNotKeepADeadLeadersRunRunning(t *testing.T) {
	for _, rerun := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "rerun_interrupted"}[rerun], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				m := Spec{Name: "m", Schedule: "0 * * * *", Shell: "x", RerunInterrupted: rerun, Overlap: OverlapAllow}
				f := &fakeExec{behave: sleepFor(time.Minute, 0)}
				b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{m}, Gather: 5 * time.Second,
					HoldLapse: holdLapseForTest}, f)
				dead := LedgerEntry{JobID: JobIDOf("m"), Instant: minute(0), Outcome: OutcomeRunning, Term: 1}
				eb := newFakeElector(ctx, "b", b.Callbacks())
				eb.follow("a", 1)
				require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, Ledger{Entries: []LedgerEntry{dead}}.Encode())) // a's heartbeat as leader
				time.Sleep(20 * time.Second)                                                                            // a died at 00:00:10
				eb.lead(2)
				time.Sleep(time.Second)
				rec, err := b.Trigger("m")
				require.NoError(t, err)
				time.Sleep(5 * time.Second) // b's window ended at 00:00:25
				synctest.Wait()

				want := RunRecord{Job: "m", ScheduledAt: minute(0), Term: 1, Outcome: OutcomeInterrupted,
					Node: "a", Heard: true, ExitCode: -1}
				assert.Equal(t, []RunRecord{want}, scheduledRecords(b, "m"))
				l, err := DecodeLedger(b.Ledger())
				require.NoError(t, err)
				got := map[uint64]LedgerEntry{}
				for _, e := range l.Entries {
					got[e.JobID] = e
				}
				sched := dead
				if rerun {
					assert.Equal(t, []string{rec.ScheduledAt.Format(time.RFC3339), "2000-01-01T00:00:00Z"}, f.scheduled("m"))
					sched.Term, sched.Stop = 2, defaultStop // the rerun, going
				} else {
					assert.Equal(t, []string{rec.ScheduledAt.Format(time.RFC3339)}, f.scheduled("m"), "not run again")
					sched = sched.ended(OutcomeInterrupted)
				}
				sched.Held = rerun // b runs the rerun
				assert.Equal(t, sched, got[JobIDOf("m")])
				assert.Equal(t, LedgerEntry{JobID: ManualJobIDOf("m"), Instant: rec.ScheduledAt, Outcome: OutcomeRunning, Term: 2,
					Held: true, Stop: defaultStop}, got[ManualJobIDOf("m")], "the manual run goes on, b's")
				cancel()
				require.NoError(t, b.Wait(context.Background()))
			})
		})
	}
}

// a leads term 1, triggers m (on_leader_loss: finish) and is deposed by b,
// the manual run going on. b (term 2) starts m's 00:05 instant and dies.
// a is elected again (term 3) while its manual run still goes: that run is
// not b's, so a's takeover concludes b's run interrupted and, with
// rerun_interrupted, runs 00:05 again.
func TestLeaderWithAManualRunGoingConcludesADeadLeadersRun(t *testing.T) {
	for _, rerun := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "rerun_interrupted"}[rerun], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				m := Spec{Name: "m", Schedule: "*/5 * * * *", Shell: "x", RerunInterrupted: rerun,
					Overlap: OverlapAllow, OnLeaderLoss: LeaderLossFinish}
				f := &fakeExec{behave: sleepFor(10*time.Minute, 0)}
				a := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{m}, Gather: 5 * time.Second,
					HoldLapse: holdLapseForTest}, f)
				ea := newFakeElector(ctx, "a", a.Callbacks())
				ea.lead(1)
				time.Sleep(10 * time.Second)
				rec, err := a.Trigger("m")
				require.NoError(t, err)
				time.Sleep(10 * time.Second)
				ea.follow("b", 2) // 00:00:20: deposed, the manual run goes on
				time.Sleep(4*time.Minute + 41*time.Second)
				dead := LedgerEntry{JobID: JobIDOf("m"), Instant: minute(5), Outcome: OutcomeRunning, Term: 2}
				require.NoError(t, a.AdoptLedgerFrom("b", HoldsNothing, Ledger{Entries: []LedgerEntry{dead}}.Encode())) // b's heartbeat, 00:05:01
				time.Sleep(59 * time.Second)
				ea.lead(3) // 00:06:00: b died
				time.Sleep(10 * time.Second)
				synctest.Wait()

				want := RunRecord{Job: "m", ScheduledAt: minute(5), Term: 2, Outcome: OutcomeInterrupted,
					Node: "b", Heard: true, ExitCode: -1}
				assert.Equal(t, []RunRecord{want}, scheduledRecords(a, "m"))
				sched := dead
				if rerun {
					assert.Equal(t, []string{rec.ScheduledAt.Format(time.RFC3339), "2000-01-01T00:05:00Z"}, f.scheduled("m"))
					sched.Term, sched.Stop = 3, stopUnbounded // the rerun, going
				} else {
					assert.Equal(t, []string{rec.ScheduledAt.Format(time.RFC3339)}, f.scheduled("m"), "not run again")
					sched = sched.ended(OutcomeInterrupted)
				}
				assert.Equal(t, &sched, a.Snapshot()[0].Ledger)
				cancel()
				require.NoError(t, a.Wait(context.Background()))
			})
		})
	}
}
