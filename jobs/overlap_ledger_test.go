package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// overlap: allow, every minute, each run 90 s: 00:01 ends at 00:02:30
// while 00:02 runs. The ledger names the newest instant, running, as it
// tells peers, as it keeps it and in /status: an older run's end never
// overwrites it (a failover would neither hold nor rerun 00:02).
func TestOverlapAllowOlderRunsEndKeepsTheNewerRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := &fakeExec{behave: sleepFor(90*time.Second, 0)}
		spec := everyMinute("o")
		spec.Overlap = OverlapAllow
		r := newTestRunner(t, "n1", f, spec)
		newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
		want := func(instant time.Time, o Outcome) {
			t.Helper()
			e := LedgerEntry{JobID: JobIDOf("o"), Instant: instant, Outcome: o, Term: 1}
			if o == OutcomeRunning {
				e.Stop = defaultStop
			}
			mine := e
			mine.Held = o == OutcomeRunning // n1 runs it, and started it
			for name, want := range map[string]LedgerEntry{"told": mine, "kept": mine} {
				b := map[string][]byte{"told": r.Ledger(), "kept": r.StateLedger()}[name]
				l, err := DecodeLedger(b)
				require.NoError(t, err)
				assert.Equal(t, []LedgerEntry{want}, l.Entries, name)
			}
			if s := r.Snapshot()[0]; assert.NotNil(t, s.Ledger) {
				assert.Equal(t, e, *s.Ledger, "status")
			}
		}
		time.Sleep(2*time.Minute + 40*time.Second) // 00:01 ended ok at 00:02:30
		synctest.Wait()
		want(minute(2), OutcomeRunning)
		assert.Equal(t, 1, r.Snapshot()[0].Running)
		time.Sleep(time.Minute) // 00:02 ended at 00:03:30, 00:03 runs
		synctest.Wait()
		want(minute(3), OutcomeRunning)
		time.Sleep(2 * time.Minute) // nothing runs at 00:05:40... 00:05 does
		synctest.Wait()
		want(minute(5), OutcomeRunning)
		cancel()
		require.NoError(t, r.Wait(context.Background()))
		want(minute(5), OutcomeCancelled)
	})
}

// finish writes a run's outcome into the ledger only if the entry names
// that run (instant and term): not over a later instant, nor over a run of
// the same instant under another term (a rerun).
func TestRunEndUpdatesOnlyItsOwnLedgerEntry(t *testing.T) {
	at := minute(5)
	for _, tc := range []struct {
		name  string
		entry LedgerEntry // the ledger's entry when the run ends
		want  Outcome
	}{
		{"the same run", LedgerEntry{Instant: at, Outcome: OutcomeRunning, Term: 3}, OutcomeOK},
		{"a later instant", LedgerEntry{Instant: at.Add(time.Minute), Outcome: OutcomeRunning, Term: 3}, OutcomeRunning},
		{"the same instant under a later term", LedgerEntry{Instant: at, Outcome: OutcomeRunning, Term: 4}, OutcomeRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRunner(t, "n1", &fakeExec{}, everyMinute("o"))
			j := r.jobs[0]
			tc.entry.JobID = j.id
			r.mu.Lock()
			r.own[j.id] = tc.entry
			r.runStartedLocked(j)
			r.mu.Unlock()
			r.finish(j, RunRecord{Job: "o", RunID: "x", ScheduledAt: at, Term: 3, Outcome: OutcomeOK})
			r.mu.Lock()
			defer r.mu.Unlock()
			assert.Equal(t, tc.want, r.own[j.id].Outcome)
			assert.Equal(t, tc.entry.Instant, r.own[j.id].Instant)
		})
	}
}
