//go:build linux

package jobs

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lanleader/lanleader/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain makes the test binary a child subreaper, so a job's grandchild
// that loses its parent is reparented here and a test can wait for it.
func TestMain(m *testing.M) {
	proctest.BecomeSubreaper()
	goleak.VerifyTestMain(m, proctest.IgnoreForkThread())
}

// Real processes: the job's environment and output reach the log, line by
// line, with job name and run id.
func TestRunnerRealProcessEnvAndOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		sink := &logSink{}
		spec := Spec{Name: "envjob", Schedule: "@every 2s", Env: map[string]string{"EXTRA": "x"},
			Shell: `echo "job=$LANLEADER_JOB term=$LANLEADER_TERM node=$LANLEADER_NODE at=$LANLEADER_SCHEDULED_AT run=$LANLEADER_RUN_ID extra=$EXTRA"; echo err >&2; exit 3`}
		r := newTestRunnerCfg(t, testConfig{Node: "n7", Jobs: []Spec{spec}, Logger: slog.New(sink)}, nil)
		el := newFakeElector(ctx, "n7", r.Callbacks())
		start := time.Now()
		el.lead(42)
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait()
		el.follow("", 42)
		cancel()
		require.NoError(t, r.Wait(context.Background()))

		out := sink.find("jobs: output")
		require.Len(t, out, 2)
		var stdout map[string]string
		for _, o := range out {
			if o["stream"] == "stdout" {
				stdout = o
			}
		}
		require.NotNil(t, stdout)
		runID := stdout["run_id"]
		require.Len(t, runID, 16)
		assert.Equal(t, "envjob", stdout["job"])
		want := "job=envjob term=42 node=n7 at=" + start.Add(2*time.Second).Format(time.RFC3339) +
			" run=" + runID + " extra=x"
		assert.Equal(t, want, stdout["line"])
		st := r.Snapshot()[0]
		require.NotNil(t, st.LastRun)
		assert.Equal(t, 3, st.LastRun.ExitCode)
		assert.Equal(t, OutcomeFailed, st.LastRun.Outcome)
		assert.Equal(t, runID, st.LastRun.RunID)
	})
}

// Losing leadership cancels a running job's whole process group: the
// grandchild is gone too.
func TestRunnerLeadershipLossKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	started := make(chan struct{})
	var once sync.Once
	sink := &logSink{watch: func(m map[string]string) {
		if m["line"] == "started" {
			once.Do(func() { close(started) })
		}
	}}
	spec := Spec{Name: "long", Schedule: "* * * * * *", KillGrace: time.Second,
		Shell: "sleep 300 & echo $! > " + pidFile + "; echo started; wait"}
	r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{spec}, Logger: slog.New(sink)}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	el := newFakeElector(ctx, "n1", r.Callbacks())
	el.lead(1)
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("job did not start")
	}
	grandchild := proctest.ReadPID(t, pidFile)

	el.follow("n2", 2)
	waitCtx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	require.NoError(t, r.Wait(waitCtx))

	proctest.WaitGone(t, grandchild) // sleep 300: gone means killed
	st := r.Snapshot()[0]
	require.NotNil(t, st.LastRun)
	assert.Equal(t, OutcomeCancelled, st.LastRun.Outcome)
}

// A real process that outlives its timeout is stopped (process group) and
// the run is recorded as failed with the timeout.
func TestRunnerRealProcessTimeout(t *testing.T) {
	var recs records
	done := make(chan struct{})
	var once sync.Once
	spec := Spec{Name: "slow", Schedule: "* * * * * *", Shell: "sleep 30", Timeout: 200 * time.Millisecond}
	r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{spec}, OnRunFinished: func(rec RunRecord) {
		recs.add(rec)
		once.Do(func() { close(done) })
	}}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	el := newFakeElector(ctx, "n1", r.Callbacks())
	el.lead(1)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("no run finished")
	}
	cancel()
	require.NoError(t, r.Wait(context.Background()))
	got := recs.all()[0]
	assert.Equal(t, OutcomeFailed, got.Outcome)
	assert.Contains(t, got.Error, "timeout after 200ms")
	assert.Equal(t, -1, got.ExitCode)
}
