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

// termRecords returns the scheduled runs of job that term started in r's
// history.
func termRecords(r *Runner, job string, term uint64) []RunRecord {
	var out []RunRecord
	for _, rec := range r.History().Runs(job, 0) {
		if !rec.Manual && rec.Term == term {
			out = append(out, rec)
		}
	}
	return out
}

// A leader starts a scheduled run and dies while leading: nobody holds
// the run. The next leader's takeover concludes it interrupted in its own
// history too, not only in the history of the followers that hear its
// ledger: one record, the one a follower files, naming the dead leader.
// Its ledger relayed back to it, the dead leader's restarted process and
// a stale relay add nothing; restarting from its state file and leading
// again does not conclude the run twice; the run's own outcome, heard
// later, replaces the record.
func TestTakeoverRecordsADeadLeadersScheduledRunInItsHistory(t *testing.T) {
	for _, rerun := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "rerun_interrupted"}[rerun], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				spec := Spec{Name: "m", Schedule: "1 * * * *", Shell: "x", RerunInterrupted: rerun}
				cl := newTakeoverCluster(ctx, t, spec)
				a, b, c, ea, eb, ec := cl.a, cl.b, cl.c, cl.ea, cl.eb, cl.ec
				logs, node, set := cl.logs, cl.node, cl.net.set
				time.Sleep(minute(1).Add(15 * time.Second).Sub(time.Now())) // a started 00:01; b and c heard it
				running := LedgerEntry{JobID: JobIDOf("m"), Instant: minute(1), Outcome: OutcomeRunning, Term: 1, Stop: defaultStop}
				restored := a.StateLedger() // a's state file
				require.NotNil(t, b.Snapshot()[0].Ledger)
				require.Equal(t, running, *b.Snapshot()[0].Ledger)

				set(nil, b, c) // a dies, leading
				ea.follow("", 1)
				time.Sleep(3500 * time.Millisecond) // off the heartbeat's beat
				set(b, b, c)
				eb.lead(2)
				ec.follow("b", 2)
				time.Sleep(4 * time.Second)
				synctest.Wait()
				assert.Empty(t, termRecords(b, "m", 1), "not while gathering")

				time.Sleep(2 * time.Second) // b's window ended at 00:01:23.5, a heartbeat went at 00:01:24
				synctest.Wait()
				want := RunRecord{Job: "m", ScheduledAt: minute(1), Term: 1, Outcome: OutcomeInterrupted,
					Node: "a", Heard: true, ExitCode: -1}
				assert.Equal(t, []RunRecord{want}, termRecords(b, "m", 1), "the new leader's own history")
				if !rerun { // with it, b's ledger moved on to the rerun before its heartbeat
					assert.Equal(t, []RunRecord{want}, termRecords(c, "m", 1), "c heard it from b")
				}
				msg := "jobs: previous leader's run was interrupted; not running it again"
				if rerun {
					msg = "jobs: previous leader's run was interrupted; running it again (rerun_interrupted)"
				}
				warns := logs.find(msg)
				require.Len(t, warns, 1)
				assert.Equal(t, "a", warns[0]["node"])

				// Relays back to b: c's pool, a's restarted process (its
				// state file says running), a stale copy.
				a2 := node("a", nil)
				require.NoError(t, a2.AdoptLedger(restored))
				newFakeElector(ctx, "a", a2.Callbacks()).follow("b", 2)
				set(b, b, c, a2)
				require.NoError(t, b.AdoptLedgerFrom("c", HoldsNothing, c.Ledger()))
				require.NoError(t, b.AdoptLedgerFrom("a", HoldsNothing, a2.Ledger()))
				require.NoError(t, b.AdoptLedgerFrom("c", HoldsNothing, Ledger{Entries: []LedgerEntry{running}}.Encode()))
				time.Sleep(5 * time.Second)
				synctest.Wait()
				assert.Equal(t, []RunRecord{want}, termRecords(b, "m", 1), "relayed back: once")

				// b restarts from its state file and leads again.
				logs2 := &logSink{}
				b2 := node("b", slog.New(logs2))
				require.NoError(t, b2.AdoptLedger(b.StateLedger())) // b's state file
				require.NoError(t, b2.History().Restore(b.History().Snapshot()))
				set(nil, c, a2)
				eb.follow("", 2)
				set(b2, b2, c, a2)
				newFakeElector(ctx, "b", b2.Callbacks()).lead(4)
				time.Sleep(10 * time.Second)
				synctest.Wait()
				got := termRecords(b2, "m", 1)
				require.Len(t, got, 1, "restarted and led again: once")
				assert.Equal(t, OutcomeInterrupted, got[0].Outcome)
				if !rerun {
					assert.Empty(t, logs2.find(msg))
				}

				// a was only cut off: its outcome arrives after all.
				ok := running
				ok.Outcome = OutcomeOK
				require.NoError(t, b2.AdoptLedgerFrom("a", HoldsNothing, Ledger{Entries: []LedgerEntry{ok}}.Encode()))
				got = termRecords(b2, "m", 1)
				require.Len(t, got, 1, "the run's own outcome replaces interrupted")
				assert.Equal(t, OutcomeOK, got[0].Outcome)

				cancel()
				cl.wg.Wait()
				for _, r := range []*Runner{a, b, c, a2, b2} {
					require.NoError(t, r.Wait(context.Background()))
				}
			})
		})
	}
}
