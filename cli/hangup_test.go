package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/jobs"
)

// TestSIGHUPWhileWaitingForTheBindAddress: the binary (Main), in udp mode
// with a bind address no interface has (198.18.0.0/15, the benchmarking
// range: nothing is sent), waits for it; a SIGHUP meanwhile is logged and
// remembered, not fatal (it was: exit 129, no log line, no on_stop, which
// systemd's Restart=on-failure takes for a clean stop). SIGTERM then stops
// it cleanly, exit 0.
func TestSIGHUPWhileWaitingForTheBindAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real process")
	}
	guard := time.After(time.Minute)
	b := startBinary(t, "--mode=udp", "--node-id", "a", "--bind", "198.18.255.254", "--http=", "--state-dir=",
		"--config", "testdata/good.yaml")
	waitFor(t, guard, b.lines, "the wait for the bind address", msgIs("waiting for the bind address to come up"))
	for range 3 {
		b.signal(t, syscall.SIGHUP)
		hup := waitFor(t, guard, b.lines, "the SIGHUP logged", msgIs("SIGHUP during start-up; the config file is re-read once the jobs are running"))
		assert.Equal(t, "INFO", hup["level"])
	}
	b.signal(t, syscall.SIGTERM)
	waitFor(t, guard, b.lines, "the clean stop", msgIs("lanleader stopped before joining"))
	code, sig := b.wait(t, guard)
	assert.Equal(t, 0, int(sig), "killed by a signal")
	assert.Equal(t, ExitOK, code)
}

// TestSIGHUPDuringStartUpReloadsOnceRunning: a SIGHUP that comes while the
// mode is still being built (the file was edited after start-up read it)
// is logged, and the file is re-read once the jobs are running: the job the
// edit added runs, the one it removed is gone. Several SIGHUPs during
// start-up make one reload.
func TestSIGHUPDuringStartUpReloadsOnceRunning(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "l.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(reloadBefore), 0o600))
	building := make(chan struct{})
	release := make(chan struct{})
	gated := Mode{
		Name: "gated", Summary: "leads once released",
		Setup: func(*pflag.FlagSet) ModeSettings { return gatedMode{building, release} },
	}
	guard := time.After(30 * time.Second)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	lines, exit := daemonLogModes(t, ctx, []Mode{gated}, "--mode=gated", "--node-id", "a", "--state-dir=", "--config", cfg)

	<-building
	require.NoError(t, os.WriteFile(cfg, []byte(reloadAfter), 0o600))
	for range 2 {
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
		waitFor(t, guard, lines, "the SIGHUP logged", msgIs("SIGHUP during start-up; the config file is re-read once the jobs are running"))
	}
	close(release)
	done := waitFor(t, guard, lines, "config reloaded", msgIs("config reloaded"))
	assert.Equal(t, []any{"added"}, done["jobs_added"])
	assert.Equal(t, []any{"removed"}, done["jobs_removed"])
	waitFor(t, guard, lines, "a run of added", func(m map[string]any) bool {
		return m["msg"] == "jobs: run started" && m["job"] == "added"
	})

	stop()
	reloads := 1
	for m := range lines { // the rest of the log, to the end
		if m["msg"] == "reloading the config file" {
			reloads++
		}
	}
	assert.Equal(t, 1, reloads, "two SIGHUPs during start-up make one reload")
	assert.Equal(t, ExitOK, <-exit)
}

// gatedMode builds a leading elector once release is closed, having
// closed building: a mode that waits at start, as udp waits for its bind
// address.
type gatedMode struct {
	building chan<- struct{}
	release  <-chan struct{}
}

func (gatedMode) Load(*Source) error { return nil }

func (gatedMode) Succession() election.Succession { return election.Succession{} }

func (g gatedMode) New(env Env) (*Elector, error) {
	close(g.building)
	select {
	case <-g.release:
	case <-env.Context.Done():
		return nil, env.Context.Err()
	}
	el := election.NewFixed(election.FixedConfig{
		Mode: "gated", Node: env.NodeID, Leads: true, Term: 1, Logger: env.Logger,
	})
	return &Elector{Elector: el, Cluster: jobs.Alone(el)}, nil
}

// TestSIGHUPStopsOtherCommands: a command other than run stops on a
// hangup, as on SIGTERM (who would wait its whole --timeout otherwise).
func TestSIGHUPStopsOtherCommands(t *testing.T) {
	hup := make(chan os.Signal, 1)
	hup <- syscall.SIGHUP
	done := make(chan int, 1)
	go func() {
		done <- executeMain(context.Background(), hup, []string{"who", "--bind", "127.0.0.1", "--peers", "127.0.0.1:9",
			"--timeout", "1h"}, io.Discard, io.Discard)
	}()
	select {
	case code := <-done:
		assert.NotEqual(t, ExitOK, code, "who found no leader")
	case <-time.After(20 * time.Second):
		require.FailNow(t, "who did not stop on SIGHUP")
	}
}
