package cli

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/statefile"
	"github.com/lanleader/lanleader/jobs"
)

// A restarted node's state file keeps the run its previous process left
// running as running, and as its own, whichever save rewrites it (a
// heartbeat adopted, a run starting or ending): the node tells peers that
// run is running but not held (it does not run it), and after one more
// restart it must still know the run was interrupted, and that it led
// that run's term (restore: jobs.Runner.RestoreLedger).
func TestStateFileKeepsThePreviousProcesssRunAcrossResaves(t *testing.T) {
	spec := jobs.Spec{Name: "m", Schedule: "0 * * * *", Command: []string{"/bin/true"}, RerunInterrupted: true}
	running := jobs.LedgerEntry{JobID: jobs.JobIDOf("m"), Instant: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		Outcome: jobs.OutcomeRunning, Term: 1}
	mine := running
	mine.Held = true // the node's own run, in its state file
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
				s.Ledger = jobs.Ledger{Entries: []jobs.LedgerEntry{mine}}.Encode()
			}))
			require.NoError(t, st.Close())

			// The next process of the same node, which led term 1.
			st, _, err = statefile.Open(dir, log)
			require.NoError(t, err)
			r, err := jobs.NewRunner(idle, jobs.RunnerConfig{Node: "a", Jobs: []jobs.Spec{spec}})
			require.NoError(t, err)
			p := statePersister{store: st, runner: func() *jobs.Runner { return r }, log: log}
			p.restore(r)
			wire, err := jobs.DecodeLedger(r.Ledger())
			require.NoError(t, err)
			require.Equal(t, []jobs.LedgerEntry{running}, wire.Entries, "told to peers running, not held")
			require.NoError(t, tt.save(p))
			require.NoError(t, st.Close())

			st, saved, err := statefile.Open(dir, log)
			require.NoError(t, err)
			defer st.Close()
			l, err := jobs.DecodeLedger(saved.Ledger)
			require.NoError(t, err)
			assert.Equal(t, []jobs.LedgerEntry{mine}, l.Entries, "the state file says what the node knows")
		})
	}
}

// Issue 22, item 6: a ledger heard that cannot be kept (the state file
// cannot be written: a full disk) is reported to the mode as an error, so
// the udp elector does not acknowledge it, and logged once at ERROR with
// the file and the cause, however often the save is retried; its recovery
// once at INFO. A ledger that does not decode is not kept either.
func TestAdoptReportsALedgerItCannotKeep(t *testing.T) {
	dir := t.TempDir()
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	st, _, err := statefile.Open(dir, log)
	require.NoError(t, err)
	defer st.Close()
	spec := jobs.Spec{Name: "m", Schedule: "0 * * * *", Command: []string{"/bin/true"}}
	r, err := jobs.NewRunner(idle, jobs.RunnerConfig{Node: "a", Jobs: []jobs.Spec{spec}})
	require.NoError(t, err)
	p := statePersister{store: st, runner: func() *jobs.Runner { return r }, log: log, unkept: new(atomic.Bool)}
	heard := func(hour int) []byte {
		return jobs.Ledger{Entries: []jobs.LedgerEntry{{JobID: jobs.JobIDOf("m"), Term: 1, Outcome: jobs.OutcomeRunning,
			Instant: time.Date(2000, 1, 1, hour, 0, 0, 0, time.UTC)}}}.Encode()
	}
	require.NoError(t, p.adopt("l", jobs.SaysNoHolds, heard(1)))

	path := filepath.Join(dir, statefile.FileName)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o700)) // the file cannot be replaced any more
	for hour := 2; hour <= 4; hour++ {
		err := p.adopt("l", jobs.SaysNoHolds, heard(hour))
		require.Error(t, err, "hour %d: not on disk", hour)
		assert.Contains(t, err.Error(), path)
	}
	errs := lines(logs.String(), "level=ERROR", "cannot keep the job ledger heard", path)
	assert.Len(t, errs, 1, "logged once, not on every heartbeat: %s", logs.String())

	require.NoError(t, os.Remove(path))
	require.NoError(t, p.adopt("l", jobs.SaysNoHolds, heard(4)), "the same ledger, passed again, is kept now")
	assert.Len(t, lines(logs.String(), "level=INFO", "job ledger kept again"), 1)
	_, saved, err := statefile.Open(dir, log)
	require.NoError(t, err)
	l, err := jobs.DecodeLedger(saved.Ledger)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2000, 1, 1, 4, 0, 0, 0, time.UTC), l.Entries[0].Instant)

	assert.Error(t, p.adopt("l", jobs.SaysNoHolds, []byte{99}), "a ledger that does not decode is not kept")
}

// lines returns the lines of logs that contain every one of subs.
func lines(logs string, subs ...string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l, s)
		}
		if all {
			out = append(out, l)
		}
	}
	return out
}

// idle is the Cluster of a runner that never leads in a test.
var idle = jobs.Alone(election.NewFixed(election.FixedConfig{Mode: "test", Node: "a", Logger: slog.New(slog.DiscardHandler)}))
