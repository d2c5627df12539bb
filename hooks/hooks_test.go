//go:build linux

package hooks

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/proctest"
)

// TestMain makes the test binary a child subreaper so a test can wait for
// a killed hook's grandchild.
func TestMain(m *testing.M) {
	proctest.BecomeSubreaper()
	goleak.VerifyTestMain(m, proctest.IgnoreForkThread())
}

const record = `echo "$LANLEADER_HOOK $LANLEADER_ROLE $LANLEADER_TERM $LANLEADER_LEADER_ID $LANLEADER_NODE" >> `

// elector drives callbacks through the real Notifier.
type elector struct {
	n    *election.Notifier
	node string
}

func newElector(node string, cb election.Callbacks) *elector {
	return &elector{n: election.NewNotifier(context.Background(), cb, election.Status{Node: node}), node: node}
}

func (e *elector) lead(term uint64) {
	e.n.Update(election.Status{Node: e.node, Role: election.Leader, Term: term,
		Leader: election.LeaderInfo{ID: e.node, Term: term}})
}

func (e *elector) follow(leader string, term uint64) {
	e.n.Update(election.Status{Node: e.node, Role: election.Follower, Term: term,
		Leader: election.LeaderInfo{ID: leader, Term: term}})
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestHooksOrderAndOncePerTransition(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	h := New(Config{
		OnLeader: Command{Shell: record + out}, OnFollower: Command{Shell: record + out},
		OnStop: Command{Argv: []string{"/bin/sh", "-c", record + out}}, Node: "a",
		Environ: []string{"PATH=/usr/bin:/bin"},
	}, nil)
	el := newElector("a", h.Callbacks())
	el.follow("b", 1) // starts as follower of b
	el.follow("b", 1) // no change: nothing
	el.lead(2)
	el.follow("c", 3) // loses leadership to c
	el.follow("d", 4) // leader changes among peers: role unchanged, nothing
	el.lead(5)
	el.lead(6)                                     // new term while leading: stop + start
	el.n.Stop(election.Status{Node: "a", Term: 6}) // process stopping: no leader known
	require.NoError(t, h.Stop(context.Background()))
	h.Callbacks().OnStartedLeading(context.Background(), 9) // after Stop: ignored

	assert.Equal(t, []string{
		"on_follower follower 1 b a",
		"on_leader leader 2 a a",
		"on_follower follower 3 c a",
		"on_leader leader 5 a a",
		"on_leader leader 6 a a",
		"on_follower follower 6  a",
		"on_stop stopped 6  a",
	}, readLines(t, out))
}

// A hook that blocks does not delay the callbacks; later hooks wait their
// turn, in order.
func TestHooksDoNotBlockCallbacks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	out := filepath.Join(dir, "out")
	h := New(Config{
		OnLeader:   Command{Shell: "cat " + fifo + " >/dev/null; " + record + out},
		OnFollower: Command{Shell: record + out},
		Node:       "a",
	}, nil)
	el := newElector("a", h.Callbacks())
	el.lead(1)        // on_leader blocks on the fifo...
	el.follow("b", 2) // ...yet both callbacks returned
	assert.Empty(t, readLines(t, out), "on_follower waits for on_leader")

	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // unblocks the hook
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, h.Stop(context.Background()))
	assert.Equal(t, []string{"on_leader leader 1 a a", "on_follower follower 2 b a"}, readLines(t, out))
}

type sink struct {
	mu   sync.Mutex
	msgs []string
}

func (s *sink) Enabled(context.Context, slog.Level) bool { return true }
func (s *sink) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s *sink) WithGroup(string) slog.Handler            { return s }
func (s *sink) Handle(_ context.Context, r slog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, r.Message)
	return nil
}

func (s *sink) count(msg string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

// A hung hook is killed (with its whole process group) after its timeout,
// a failing hook is logged, and the hooks after them still run.
func TestHooksHungKilledFailingLogged(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	out := filepath.Join(dir, "out")
	logs := &sink{}
	h := New(Config{
		OnLeader:   Command{Shell: "sleep 300 & echo $! > " + pidFile + "; wait"},
		OnFollower: Command{Shell: "exit 4"},
		OnStop:     Command{Shell: record + out},
		// Long enough for a shell to start and exit 4 under -race and load
		// (each run starts through proc's shim, a re-exec of this binary),
		// on a CI machine whose two cores run other test binaries too. The
		// hung hook costs this much of the test's time.
		Timeout: 10 * time.Second,
		Node:    "a",
	}, slog.New(logs))
	el := newElector("a", h.Callbacks())
	el.lead(1)
	el.follow("b", 2)
	require.NoError(t, h.Stop(context.Background()))

	assert.Equal(t, 1, logs.count("hooks: killed after timeout"))
	assert.Equal(t, 1, logs.count("hooks: failed"))
	assert.Equal(t, []string{"on_stop stopped 2 b a"}, readLines(t, out))

	proctest.WaitGone(t, proctest.ReadPID(t, pidFile)) // sleep 300: gone means killed
}

// Stop gives up when its context ends: the running hook is killed, queued
// ones are dropped.
func TestHooksStopDeadline(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	h := New(Config{
		OnLeader: Command{Shell: "sleep 300"},
		OnStop:   Command{Shell: record + out},
		Timeout:  time.Hour,
	}, nil)
	newElector("a", h.Callbacks()).lead(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, h.Stop(ctx), context.Canceled)
	assert.Empty(t, readLines(t, out))
}

func TestHooksNoneConfigured(t *testing.T) {
	h := New(Config{}, nil)
	el := newElector("a", h.Callbacks())
	el.lead(1)
	el.follow("b", 2)
	require.NoError(t, h.Stop(context.Background()))
}

// TestServiceExitedRunsItsHook: on_service_exit runs once per exit, in
// order with the role hooks, with the copy's service, exit code, error,
// restarts and output in its environment; without the hook nothing runs.
func TestServiceExitedRunsItsHook(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	h := New(Config{
		OnLeader:      Command{Shell: record + out},
		OnServiceExit: Command{Shell: `printf '%s\n' "exit $LANLEADER_SERVICE $LANLEADER_TERM $LANLEADER_EXIT_CODE [$LANLEADER_ERROR] $LANLEADER_RESTARTS [$LANLEADER_OUTPUT]" >> ` + out},
		Node:          "a",
	}, nil)
	el := newElector("a", h.Callbacks())
	el.lead(3)
	h.ServiceExited(ServiceExit{Service: "scheduler", Term: 3, ExitCode: 1, Error: "exit 1", Restarts: 2, Output: []string{"Traceback", "KeyError"}})
	require.NoError(t, h.Stop(context.Background()))
	assert.Equal(t, []string{"on_leader leader 3 a a", "exit scheduler 3 1 [exit 1] 2 [Traceback", "KeyError]"}, readLines(t, out))

	quiet := New(Config{Node: "a"}, nil)
	quiet.ServiceExited(ServiceExit{Service: "scheduler"})
	require.NoError(t, quiet.Stop(context.Background()))
}
