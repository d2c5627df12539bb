//go:build linux

package proc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain makes the test binary a child subreaper, so grandchildren that
// lose their parent are reparented here and a test can wait for them.
func TestMain(m *testing.M) {
	if script := os.Getenv(parentEnv); script != "" {
		actAsParent(script)
		return
	}
	proctest.BecomeSubreaper()
	goleak.VerifyTestMain(m, proctest.IgnoreForkThread())
}

type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) add(s Stream, line string, partial bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := ""
	if partial {
		p = "+"
	}
	l.got = append(l.got, string(s)+":"+line+p)
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

func TestRunExitAndOutput(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes+10)
	tests := []struct {
		name     string
		argv     []string
		env      []string
		wantCode int
		wantOut  []string
	}{
		{"ok", sh("echo hello; echo oops >&2"), nil, 0, []string{"stdout:hello", "stderr:oops"}},
		{"exit code", sh("exit 3"), nil, 3, nil},
		{"no trailing newline", sh("printf 'a\\nb'"), nil, 0, []string{"stdout:a", "stdout:b"}},
		{"env", sh("echo $FOO"), []string{"FOO=bar"}, 0, []string{"stdout:bar"}},
		{"long line split", sh("printf '%s\\n' " + long), nil, 0,
			[]string{"stdout:" + long[:MaxLineBytes] + "+", "stdout:" + long[MaxLineBytes:]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l lines
			res := Run(context.Background(), Spec{Argv: tt.argv, Env: tt.env, OnLine: l.add})
			require.NoError(t, res.Err)
			assert.Equal(t, tt.wantCode, res.ExitCode)
			assert.Equal(t, tt.wantCode == 0, res.OK())
			assert.False(t, res.Stopped)
			got := l.all()
			// stdout and stderr are read concurrently; compare per stream.
			assert.ElementsMatch(t, tt.wantOut, got)
		})
	}
}

func TestRunStartError(t *testing.T) {
	res := Run(context.Background(), Spec{Argv: []string{"/nonexistent/lanleader-test"}})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "/nonexistent/lanleader-test")
	assert.Equal(t, -1, res.ExitCode)
	assert.False(t, res.OK())

	res = Run(context.Background(), Spec{})
	require.Error(t, res.Err)
}

// startedLine returns an OnLine func that closes ch on the first "started".
func startedLine(ch chan struct{}) func(Stream, string, bool) {
	var once sync.Once
	return func(_ Stream, line string, _ bool) {
		if line == "started" {
			once.Do(func() { close(ch) })
		}
	}
}

func TestRunStopKillsGroup(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		grace      time.Duration
		wantKilled bool
	}{
		// sh waits for its child; SIGTERM to the group ends both. The
		// grace is long so that a loaded machine cannot turn this into
		// a SIGKILL.
		{"term", "sleep 300 & echo $! > %s; echo started; wait", time.Minute, false},
		// The shell ignores SIGTERM, so only SIGKILL after the grace ends it.
		{"kill after grace", "trap '' TERM; sleep 300 & echo $! > %s; echo started; wait; wait", 100 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			started := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			resc := make(chan Result, 1)
			go func() {
				resc <- Run(ctx, Spec{
					Argv:      sh(strings.Replace(tt.script, "%s", pidFile, 1)),
					KillGrace: tt.grace,
					OnLine:    startedLine(started),
				})
			}()
			<-started
			grandchild := proctest.ReadPID(t, pidFile)
			cancel()
			res := <-resc
			assert.True(t, res.Stopped)
			assert.Equal(t, tt.wantKilled, res.Killed)
			assert.False(t, res.OK())
			assert.NotZero(t, res.Signal, "main process ended by a signal: %s", res)
			proctest.WaitGone(t, grandchild)
		})
	}
}

func TestRunExitKillsLeftovers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	res := Run(context.Background(), Spec{Argv: sh("sleep 300 & echo $! > " + pidFile)})
	require.NoError(t, res.Err)
	assert.Equal(t, 0, res.ExitCode)
	proctest.WaitGone(t, proctest.ReadPID(t, pidFile))
}

// A process that left the run's group (setsid) is killed too when the run
// ends: the shim is the run's subreaper and kills what is left.
func TestRunExitKillsEscapedLeftovers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	res := Run(context.Background(), Spec{Argv: sh("setsid sleep 300 & echo $! > " + pidFile)})
	require.NoError(t, res.Err)
	assert.Equal(t, 0, res.ExitCode)
	proctest.WaitGone(t, proctest.ReadPID(t, pidFile))
}

// The command gets exactly the environment it was given: the shim's own
// variable is gone, and argv[0] is the command's.
func TestRunEnvironmentIsTheCommands(t *testing.T) {
	var l lines
	res := Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", `env; echo "argv0=$0"`}, Env: []string{"A=1"}, OnLine: l.add})
	require.NoError(t, res.Err)
	got := l.all()
	assert.Contains(t, got, "stdout:A=1")
	assert.Contains(t, got, "stdout:argv0=/bin/sh")
	for _, line := range got {
		assert.NotContains(t, line, shimEnv)
	}
}
