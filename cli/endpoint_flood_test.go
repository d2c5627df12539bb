package cli

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/lanleader/lanleader/httpapi"
)

// TestIdleConnectionFloodLosesNoInstant: 5,000 keep-alive connections to
// the status endpoint, each of which sent one byte of its next request,
// while a leader runs a job every second with its file descriptors limited
// to 1,024. Every instant from the flood's start to two seconds after its
// end starts and succeeds (its pipes open), every flood request is
// answered, the process never holds more than the connection cap beyond
// what it held before, and a new client is still served at the end.
// Real time, bounded: a socket cannot live in a synctest bubble.
func TestIdleConnectionFloodLosesNoInstant(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real process and opens 5,000 connections")
	}
	const maxFailed = 5 // flood requests unanswered before the flood stops
	flood, fdLimit := floodSize(t, 5000, 1024)
	addr := "127.0.0.1:" + freeTCPPort(t)
	cfg := filepath.Join(t.TempDir(), "l.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`jobs:
  - name: tick
    schedule: "* * * * * *"
    shell: echo tick
`), 0o600))
	b := startBinary(t, "--mode=static", "--node-id", "a", "--leader", "a", "--http", addr, "--state-dir=", "--config", cfg)
	guard := time.After(3 * time.Minute)
	waitFor(t, guard, b.lines, "became leader", msgIs("became leader"))
	pid := b.cmd.Process.Pid
	require.NoError(t, unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: uint64(fdLimit), Max: uint64(fdLimit)}, nil))
	before := openFDs(t, pid)

	floodStart := time.Now()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	failed, most := 0, before
	for i := 0; i < flood && failed < maxFailed; i++ {
		c, err := idleKeepAlive(addr)
		if err != nil {
			failed++
			t.Logf("flood connection %d: %v", i, err)
		}
		if c != nil {
			conns = append(conns, c)
		}
		if i%100 == 0 {
			most = max(most, openFDs(t, pid))
		}
	}
	floodEnd := time.Now()
	most = max(most, openFDs(t, pid))
	t.Logf("%d connections in %v; %d descriptors before, at most %d during", len(conns), floodEnd.Sub(floodStart).Round(time.Millisecond), before, most)
	assert.Zero(t, failed, "flood requests unanswered")
	assert.LessOrEqual(t, most, before+httpapi.DefaultMaxConns+16, "descriptors beyond the connection cap")

	// A newcomer is served while the flood's connections are open.
	c, err := idleKeepAlive(addr)
	if assert.NoError(t, err, "a new client during the flood") {
		c.Close()
	}

	// Every instant from the flood's start to 2 s after its end started
	// and succeeded.
	// Instants are keyed by Unix second.
	first := floodStart.Unix() + 1
	last := floodEnd.Unix() + 2
	started, ok, done := map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	for !done[last] {
		m := waitFor(t, guard, b.lines, "the run of the instant 2 s after the flood", func(m map[string]any) bool {
			return m["job"] == "tick"
		})
		when, _ := time.Parse(time.RFC3339, str(m["scheduled_at"]))
		at := when.Unix()
		switch m["msg"] {
		case "jobs: run started":
			started[at] = true
		case "jobs: run finished":
			ok[at], done[at] = true, true
		case "jobs: run failed":
			done[at] = true
			t.Errorf("run of %s failed: %v %v", str(m["scheduled_at"]), m["error"], m["output_tail"])
		}
	}
	for at := first; at <= last; at++ {
		assert.True(t, started[at], "instant %s never started", time.Unix(at, 0).UTC().Format(time.RFC3339))
		assert.True(t, ok[at], "instant %s did not succeed", time.Unix(at, 0).UTC().Format(time.RFC3339))
	}

	b.signal(t, syscall.SIGTERM)
	code, sig := b.wait(t, guard)
	assert.Equal(t, ExitOK, code, "signal %v", sig)
}

// floodSize returns how many connections the test can hold (want, its
// own descriptor limit raised to fit if it can be) and the descriptor
// limit to give lanleader: limit, scaled down with the flood so that the
// flood alone would exhaust it without a connection cap.
func floodSize(t *testing.T, want, limit int) (int, int) {
	t.Helper()
	var rl unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &rl))
	need := uint64(want + 256)
	if rl.Cur < need {
		raised := unix.Rlimit{Cur: max(need, rl.Cur), Max: max(need, rl.Max)}
		if unix.Setrlimit(unix.RLIMIT_NOFILE, &raised) == nil {
			rl = raised
		}
	}
	flood := min(want, int(rl.Cur)-256)
	limit = min(limit, flood/2)
	if limit < 2*httpapi.DefaultMaxConns {
		t.Skipf("descriptor limit %d: too low to flood the endpoint beyond its connection cap", rl.Cur)
	}
	if flood < want {
		t.Logf("descriptor limit %d: flooding with %d connections, lanleader limited to %d", rl.Cur, flood, limit)
	}
	return flood, limit
}

// idleKeepAlive opens a connection to addr, asks for /livez on it with
// keep-alive, then sends one byte of a next request: a connection an
// endpoint without an idle timeout keeps for good.
func idleKeepAlive(addr string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	if err := c.SetDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return c, err
	}
	if _, err := io.WriteString(c, "GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		return c, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return c, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("/livez: %s", resp.Status)
	}
	if err != nil {
		return c, err
	}
	_, err = io.WriteString(c, "G")
	return c, err
}

// openFDs counts the file descriptors process pid holds.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	require.NoError(t, err)
	return len(ents)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
