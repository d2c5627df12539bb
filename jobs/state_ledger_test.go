package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Node a led term 1 and was killed while m's 00:00 run went on. Its next
// process gets the run back from its state file: it tells peers that run
// is running, but not held (Ledger: it does not run it), and keeps it
// running and marked as its own (StateLedger), so the state file, however
// often that process re-saves it, lets the process after it lead,
// conclude the run interrupted, naming itself, and run it again
// (rerun_interrupted).
func TestRestartedLeaderRerunsItsInterruptedRunAfterASecondRestart(t *testing.T) {
	for _, resaved := range []bool{false, true} {
		t.Run(map[bool]string{false: "one restart", true: "state file re-saved, second restart"}[resaved], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				spec := Spec{Name: "m", Schedule: "0 * * * *", Shell: "x", RerunInterrupted: true}
				running := LedgerEntry{JobID: JobIDOf("m"), Instant: minute(0), Outcome: OutcomeRunning, Term: 1}
				mine := running
				mine.Held = true // in a's state file: a started it
				disk := Ledger{Entries: []LedgerEntry{mine}}.Encode()
				cfg := testConfig{Node: "a", Jobs: []Spec{spec}, Gather: 5 * time.Second,
					HoldLapse: holdLapseForTest}
				if resaved {
					between := newTestRunnerCfg(t, cfg, &fakeExec{})
					require.NoError(t, between.RestoreLedger(disk))
					wire, err := DecodeLedger(between.Ledger())
					require.NoError(t, err)
					require.Equal(t, []LedgerEntry{running}, wire.Entries, "told to peers running, not held")
					disk = between.StateLedger() // what the CLI saves on its next heartbeat or start
					kept, err := DecodeLedger(disk)
					require.NoError(t, err)
					require.Equal(t, []LedgerEntry{mine}, kept.Entries, "kept as a's own")
				}
				f := &fakeExec{}
				a := newTestRunnerCfg(t, cfg, f)
				require.NoError(t, a.RestoreLedger(disk))
				time.Sleep(20 * time.Second)
				newFakeElector(ctx, "a", a.Callbacks()).lead(3)
				time.Sleep(6 * time.Second) // past the gathering window
				synctest.Wait()
				assert.Equal(t, []string{"2000-01-01T00:00:00Z"}, f.scheduled("m"), "rerun_interrupted")
				var outcomes []Outcome
				for _, rec := range a.History().Runs("m", 0) {
					if rec.Term == 1 {
						outcomes = append(outcomes, rec.Outcome)
						assert.Equal(t, "a", rec.Node, "a led term 1")
					}
				}
				assert.Equal(t, []Outcome{OutcomeInterrupted}, outcomes, "term 1's run in the history")
				cancel()
				require.NoError(t, a.Wait(context.Background()))
			})
		})
	}
}
