package cli

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// asMainChildren makes the processes the demo starts (this test binary)
// act as lanleader. A race-enabled child would otherwise also sleep a second
// at exit (the race detector's atexit_sleep_ms default).
func asMainChildren(t *testing.T) {
	t.Setenv(asMainEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
}

// freeDemoPorts finds n consecutive free UDP ports on loopback.
func freeDemoPorts(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		base := 20000 + rand.IntN(40000)
		if checkDemoPorts(base, n) == nil {
			return base
		}
	}
	t.Fatalf("no %d consecutive free UDP ports on 127.0.0.1", n)
	return 0
}

// TestDemoFailsOverWithoutDuplicates runs the real demo: three real
// processes (this test binary acting as lanleader) on loopback, the leader
// SIGKILLed every 1.5 s, until a failover happened, a killed node came
// back as a follower and the job ran (a few seconds; a loaded machine may
// take longer, so the demo's duration is only the bound). It checks that
// no scheduled instant ran twice and that no node outlived the demo (their
// ports are free again).
func TestDemoFailsOverWithoutDuplicates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes for several seconds")
	}
	asMainChildren(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	o := demoOptions{nodes: 3, killEvery: 1500 * time.Millisecond, duration: time.Minute,
		interval: 100 * time.Millisecond, basePort: freeDemoPorts(t, 3),
		until: func(s demoSummary) bool { return len(s.Failovers) > 0 && s.RejoinedFollower > 0 && s.Instants > 0 }}
	require.NoError(t, o.validate())

	var out bytes.Buffer
	sum, err := runDemo(context.Background(), o, exe, &out)
	t.Logf("demo output:\n%s", out.String())
	require.NoError(t, err)

	assert.NotEmpty(t, sum.Failovers, "a killed leader must be replaced")
	for _, f := range sum.Failovers {
		assert.NotEqual(t, f.Killed, f.By)
	}
	assert.Positive(t, sum.Restarts)
	assert.Positive(t, sum.RejoinedFollower, "a restarted node must rejoin as a follower")
	assert.Empty(t, sum.Duplicates, "no scheduled instant may run twice")
	assert.Empty(t, sum.Unexpected, "no node may exit on its own")
	total := 0
	for _, n := range sum.RunsPerNode {
		total += n
	}
	assert.Positive(t, total, "the job must have run")
	assert.Equal(t, total, sum.Instants, "every run is a distinct instant")
	assert.Contains(t, out.String(), "killed n")
	assert.Contains(t, out.String(), "no scheduled instant ran twice")
	assert.NoError(t, checkDemoPorts(o.basePort, o.nodes), "a node outlived the demo")
}

// TestDemoInterrupted checks that cancelling the demo's context (Ctrl-C)
// stops every node and still prints the summary.
func TestDemoInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	asMainChildren(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	o := demoOptions{nodes: 2, killEvery: 0, duration: time.Hour,
		interval: 100 * time.Millisecond, basePort: freeDemoPorts(t, 2)}

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // interrupted at once: the nodes start and are stopped again
	var out bytes.Buffer
	sum, err := runDemo(ctx, o, exe, &out)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "interrupted; stopping the nodes")
	assert.Contains(t, out.String(), "summary after")
	assert.Empty(t, sum.Unexpected)
	assert.NoError(t, checkDemoPorts(o.basePort, o.nodes), "a node outlived the demo")
}
