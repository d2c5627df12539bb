package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSystemd listens on a NOTIFY_SOCKET of its own and passes every
// datagram it gets to the returned channel.
func fakeSystemd(t *testing.T) <-chan string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	ch := make(chan string, 100)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(ch)
				return
			}
			ch <- string(buf[:n])
		}
	}()
	return ch
}

// daemonLog runs `lanleader run` in-process with args and returns its JSON
// log lines, one map each, and its exit code once ctx is done.
func daemonLog(t *testing.T, ctx context.Context, args ...string) (<-chan map[string]any, <-chan int) {
	t.Helper()
	return daemonLogModes(t, ctx, nil, args...)
}

// daemonLogModes is daemonLog with further modes registered.
func daemonLogModes(t *testing.T, ctx context.Context, modes []Mode, args ...string) (<-chan map[string]any, <-chan int) {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pr.Close() })
	exit := make(chan int, 1)
	go func() {
		code := Execute(ctx, append([]string{"run", "--log-format", "json", "--http="}, args...), io.Discard, pw, modes...)
		pw.Close()
		exit <- code
	}()
	return jsonLines(pr), exit
}

// jsonLines decodes the JSON log lines read from r, until r ends.
func jsonLines(r io.Reader) <-chan map[string]any {
	lines := make(chan map[string]any, 10000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	return lines
}

// waitFor reads from ch until pred holds for an element, failing the test
// at the guard deadline. It returns the matching element.
func waitFor[T any](t *testing.T, guard <-chan time.Time, ch <-chan T, what string, pred func(T) bool) T {
	t.Helper()
	for {
		select {
		case v, ok := <-ch:
			require.True(t, ok, "closed before %s", what)
			if pred(v) {
				return v
			}
		case <-guard:
			require.FailNow(t, "timed out waiting for "+what)
		}
	}
}

func msgIs(msg string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["msg"] == msg }
}

const reloadBefore = `jobs:
  - name: kept
    schedule: "* * * * * *"
    shell: echo kept
  - name: removed
    schedule: "* * * * * *"
    shell: echo removed
`

const reloadAfter = `log:
  level: debug
jobs:
  - name: kept
    schedule: "* * * * * *"
    shell: echo kept
  - name: added
    schedule: "* * * * * *"
    shell: echo added
`

// TestReloadAndNotify runs a static-mode leader under a fake systemd:
// READY once it leads, WATCHDOG pings, a SIGHUP reload (RELOADING with
// MONOTONIC_USEC, then READY) that adds and removes a job without losing
// leadership, a refused reload of a broken file, and STOPPING at the end.
func TestReloadAndNotify(t *testing.T) {
	notes := fakeSystemd(t)
	t.Setenv("WATCHDOG_USEC", "200000")
	cfg := filepath.Join(t.TempDir(), "l.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(reloadBefore), 0o600))
	guard := time.After(30 * time.Second)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	lines, exit := daemonLog(t, ctx, "--mode=static", "--node-id", "a", "--leader", "a", "--config", cfg)

	waitFor(t, guard, lines, "became leader", msgIs("became leader"))
	waitFor(t, guard, notes, "READY=1", func(s string) bool { return s == "READY=1" })
	waitFor(t, guard, notes, "WATCHDOG=1", func(s string) bool { return s == "WATCHDOG=1" })
	waitFor(t, guard, lines, "a run of removed", func(m map[string]any) bool {
		return m["msg"] == "jobs: run started" && m["job"] == "removed"
	})

	require.NoError(t, os.WriteFile(cfg, []byte(reloadAfter), 0o600))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	n := waitFor(t, guard, notes, "RELOADING=1", func(s string) bool { return strings.HasPrefix(s, "RELOADING=1\n") })
	assert.Regexp(t, `^RELOADING=1\nMONOTONIC_USEC=\d+\n?$`, n)
	waitFor(t, guard, notes, "READY=1 after the reload", func(s string) bool { return s == "READY=1" })
	var msgs []string
	done := waitFor(t, guard, lines, "config reloaded", func(m map[string]any) bool {
		msgs = append(msgs, m["msg"].(string))
		return m["msg"] == "config reloaded"
	})
	assert.Contains(t, msgs, "log level changed", "log.level applies on reload")
	assert.Equal(t, []any{"added"}, done["jobs_added"])
	assert.Equal(t, []any{"removed"}, done["jobs_removed"])
	// After the reload: the added job runs, the removed one never again.
	var ranAdded bool
	for !ranAdded {
		m := waitFor(t, guard, lines, "a run of added", msgIs("jobs: run started"))
		assert.NotEqual(t, "removed", m["job"], "the removed job ran after the reload")
		ranAdded = m["job"] == "added"
		msgs = append(msgs, m["msg"].(string))
	}
	assert.NotContains(t, msgs, "stopped leading", "a reload keeps leadership")

	// A broken file is refused with its line; the jobs stay as they were.
	require.NoError(t, os.WriteFile(cfg, []byte("jobs:\n  - name: x\n    schedule: \"61 * * * *\"\n    shell: echo\n"), 0o600))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	bad := waitFor(t, guard, lines, "reload refused", msgIs("reload refused; the running configuration stays"))
	assert.Contains(t, bad["problem"], cfg+":3: jobs[0].schedule")
	assert.Equal(t, "ERROR", bad["level"])
	waitFor(t, guard, lines, "kept still runs", func(m map[string]any) bool {
		return m["msg"] == "jobs: run started" && m["job"] == "kept"
	})

	stop()
	waitFor(t, guard, notes, "STOPPING=1", func(s string) bool { return s == "STOPPING=1" })
	assert.Equal(t, ExitOK, <-exit)
}

// TestReloadReportsElectionChanges: an election setting changed in the file
// is reported and kept until a restart.
func TestReloadReportsElectionChanges(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "l.yaml")
	write := func(priority int) {
		require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("election:\n  mode: udp\n  priority: %d\n", priority)), 0o600))
	}
	write(0)
	rf := newRunFlags(pflagSet(), BuiltinModes())
	rf.s.ConfigPath = cfg
	old, err := rf.load()
	require.NoError(t, err)
	write(5)
	nrf, err := rf.fresh()
	require.NoError(t, err)
	cur, err := nrf.load()
	require.NoError(t, err)
	assert.Equal(t, []string{"priority"}, electionChanges(old, cur))
	assert.Empty(t, electionChanges(old, old))
}

// TestRunWaitsForBindAddress: a bind address that no interface has (yet)
// is waited for, said at WARN, and a stop meanwhile is a clean exit, not a
// config error that would keep the unit down.
func TestRunWaitsForBindAddress(t *testing.T) {
	guard := time.After(30 * time.Second)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	// 198.18.0.0/15 is the benchmarking range: on no interface of this host.
	lines, exit := daemonLog(t, ctx, "--mode=udp", "--node-id", "a", "--bind", "198.18.255.254", "--config", "testdata/good.yaml")
	w := waitFor(t, guard, lines, "the wait", msgIs("waiting for the bind address to come up"))
	assert.Equal(t, "WARN", w["level"])
	assert.Equal(t, "198.18.255.254", w["bind"])
	stop()
	assert.Equal(t, ExitOK, <-exit)
}

// TestLoadTakesARewrittenFileWhole: run and reload (fresh, then load)
// read the config file until two reads agree, so a file rewritten in
// place while it is read is taken whole, not cut short with a job missing
// and a shell command cut, and the rewrite is reported with how to write
// the file instead.
func TestLoadTakesARewrittenFileWhole(t *testing.T) {
	const whole = `election:
  mode: static
  node_id: a
  leader: a
jobs:
  - name: prune
    schedule: "@daily"
    shell: rm -rf /srv/cache/thumbnails
  - name: report
    schedule: "@weekly"
    command: [/usr/local/bin/report, --mail]
`
	cut := whole[:strings.Index(whole, "/cache")] + "\n"
	synctest.Test(t, func(t *testing.T) {
		rf := newRunFlags(pflagSet(), BuiltinModes())
		rf.s.ConfigPath = "l.yaml"
		reads := 0
		rf.readFile = func(string) ([]byte, error) {
			reads++
			if reads%3 == 1 { // the first read of each load finds it cut
				return []byte(cut), nil
			}
			return []byte(whole), nil
		}
		nrf, err := rf.fresh()
		require.NoError(t, err)
		for _, rf := range []*runFlags{rf, nrf} {
			rc, err := rf.load()
			require.NoError(t, err)
			require.Len(t, rc.file.Jobs, 2)
			assert.Equal(t, "rm -rf /srv/cache/thumbnails", rc.file.Jobs[0].Shell)
			assert.Contains(t, rc.warnings, "l.yaml changed while it was read: taken as it stood for 100ms after 3 reads; write it elsewhere and rename it into place (mv), which replaces it at once")
		}
		assert.Equal(t, 6, reads)
	})
}
