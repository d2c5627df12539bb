package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freeUDPPort returns a UDP port on 127.0.0.1 that was free a moment ago.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// startLines runs `lanleader run` in udp mode on loopback with args, reads
// its JSON log until the line "lanleader starting" (the daemon is then
// up) and stops it; it returns the lines up to that one.
func startLines(t *testing.T, config string, args ...string) []map[string]any {
	t.Helper()
	guard, cancelGuard := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelGuard()
	ctx, stop := context.WithCancel(guard)
	defer stop()
	pr, pw := io.Pipe()
	defer pr.Close()
	exit := make(chan int, 1)
	go func() {
		code := Execute(ctx, append([]string{"run", "--mode=udp", "--node-id", "a", "--bind", "127.0.0.1",
			"--config", config, "--http=", "--state-dir=", "--log-format", "json"}, args...), io.Discard, pw)
		pw.Close()
		exit <- code
	}()
	var lines []map[string]any
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		l := decodeLogLine[map[string]any](t, sc.Bytes())
		lines = append(lines, l)
		if l["msg"] == "lanleader starting" {
			stop()
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			break
		}
	}
	require.Equal(t, ExitOK, <-exit)
	return lines
}

// guaranteeLine returns the index and the line among lines whose message
// states the guarantee.
func guaranteeLine(lines []map[string]any) (int, map[string]any) {
	for i, l := range lines {
		if m, _ := l["msg"].(string); strings.HasPrefix(m, "quorum: ") || strings.HasPrefix(m, "no quorum") {
			return i, l
		}
	}
	return -1, nil
}

// TestRunStatesTheGuaranteeFirst: a node says in its first log lines which
// guarantee is in force — three peers listed: quorum (INFO); two: none,
// and what to do (WARN) — and a witness leaves the file's jobs out,
// saying so, and runs none.
func TestRunStatesTheGuaranteeFirst(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(config, []byte("jobs:\n  - name: backup\n    schedule: '@daily'\n    command: [true]\n"), 0o600))
	p := []int{freeUDPPort(t), freeUDPPort(t), freeUDPPort(t)}
	peers := func(n int) string {
		var s []string
		for _, port := range p[:n] {
			s = append(s, fmt.Sprintf("127.0.0.1:%d", port))
		}
		return strings.Join(s, ",")
	}
	port := fmt.Sprint(p[0])

	lines := startLines(t, config, "--port", port, "--peers", peers(3))
	i, l := guaranteeLine(lines)
	require.NotNil(t, l, "no guarantee line in %v", lines)
	assert.LessOrEqual(t, i, 3, "among the first lines: %v", lines)
	assert.Equal(t, "quorum: 3 voters (peers: this node and 2 listed); a minority side runs nothing", l["msg"])
	assert.Equal(t, "INFO", l["level"])
	assert.Equal(t, true, l["quorum"])
	assert.EqualValues(t, 3, l["voters"])

	lines = startLines(t, config, "--port", port, "--peers", peers(2))
	i, l = guaranteeLine(lines)
	require.NotNil(t, l, "no guarantee line in %v", lines)
	assert.LessOrEqual(t, i, 3, "among the first lines: %v", lines)
	assert.Equal(t, "WARN", l["level"])
	assert.Equal(t, false, l["quorum"])
	assert.Contains(t, l["msg"], "no quorum: 2 voters (peers: this node and 1 listed); a partition runs jobs on both sides until it heals: add a witness")

	lines = startLines(t, config, "--port", port, "--peers", peers(3), "--role", "witness")
	var msgs []string
	for _, l := range lines {
		msgs = append(msgs, l["msg"].(string))
	}
	assert.Contains(t, msgs, "role witness: this node never leads, so the 1 jobs and 0 services of "+config+" run on the leader, never here")
	_, l = guaranteeLine(lines)
	require.NotNil(t, l, "no guarantee line in %v", msgs)
	assert.Contains(t, l["msg"], "this node a witness")
	assert.Equal(t, "witness", l["role"])
	assert.EqualValues(t, 0, lines[len(lines)-1]["jobs"], "a witness's runner has no jobs")
}
