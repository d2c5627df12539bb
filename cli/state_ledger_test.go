package cli

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/internal/statefile"
	"github.com/lanleader/lanleader/jobs"
)

// A restarted node's state file keeps the run its previous process left
// running as running, whichever save rewrites it (a heartbeat adopted, a
// run starting or ending): the node tells peers 'none' of that run, but
// after one more restart it must still know the run was interrupted.
func TestStateFileKeepsThePreviousProcesssRunAcrossResaves(t *testing.T) {
	spec := jobs.Spec{Name: "m", Schedule: "0 * * * *", Command: []string{"/bin/true"}, RerunInterrupted: true}
	running := jobs.LedgerEntry{JobID: jobs.JobIDOf("m"), Instant: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		Outcome: jobs.OutcomeRunning, Term: 1}
	for _, tt := range []struct {
		name string
		save func(statePersister) error
	}{
		{"saveLedger", statePersister.saveLedger},
		{"saveRun", func(p statePersister) error { p.saveRun(); return nil }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			log := slog.New(slog.DiscardHandler)
			// The killed process's file: it had started m's 00:00 run in term 1.
			st, _, err := statefile.Open(dir, log)
			require.NoError(t, err)
			require.NoError(t, st.Update(func(s *statefile.State) {
				s.Ledger = jobs.Ledger{Entries: []jobs.LedgerEntry{running}}.Encode()
			}))
			require.NoError(t, st.Close())

			// The next process of the same node, which led term 1.
			st, _, err = statefile.Open(dir, log)
			require.NoError(t, err)
			r, err := jobs.NewRunner(jobs.RunnerConfig{Node: "a", Jobs: []jobs.Spec{spec},
				LedBy: func(term uint64, node string) bool { return node == "a" && term == 1 }})
			require.NoError(t, err)
			p := statePersister{store: st, runner: func() *jobs.Runner { return r }, log: log}
			p.restore(r)
			wire, err := jobs.DecodeLedger(r.Ledger())
			require.NoError(t, err)
			require.Len(t, wire.Entries, 1)
			require.Equal(t, jobs.OutcomeNone, wire.Entries[0].Outcome, "precondition: told to peers as none")
			require.NoError(t, tt.save(p))
			require.NoError(t, st.Close())

			st, saved, err := statefile.Open(dir, log)
			require.NoError(t, err)
			defer st.Close()
			l, err := jobs.DecodeLedger(saved.Ledger)
			require.NoError(t, err)
			assert.Equal(t, []jobs.LedgerEntry{running}, l.Entries, "the state file says what the node knows")
		})
	}
}
