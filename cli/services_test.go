//go:build linux

package cli

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/internal/proctest"
	"github.com/lanleader/lanleader/jobs"
)

// TestRunServices runs `lanleader run --mode=static` as the leader with four
// services, reads its log and /status, and stops it: the steady one runs
// with its identity in its environment; the one that exits at once is
// restarted with a growing delay, each exit logged and given to
// on_service_exit; the one whose program is missing keeps being retried,
// the error logged; at the stop every copy ends before leadership does,
// the one that ignores SIGTERM (and its child in another session) by
// SIGKILL after its stop_grace.
//
// The copies' licences (jobs.Licence) are renewed by this process in real
// time: one stalled for half a licence or more (a loaded 2-core machine
// can stall it) may let a licence run out, and its shim then rightly stops
// the copy (or refuses to start it), which proves nothing here. Such a run
// is run again, a few times at most; one that did not stall asserts all.
func TestRunServices(t *testing.T) {
	for attempt := 1; ; attempt++ {
		watch := proctest.WatchStalls()
		run := runServices(t)
		stall := watch.Stop()
		if stall < jobs.Licence/2 {
			run.check(t)
			return
		}
		require.Less(t, attempt, 5, "this process stalled past half a licence in every run (last: %v)", stall)
		t.Logf("run %d: this process stalled for %v, a licence may have run out; again", attempt, stall)
		if pid, err := strconv.Atoi(run.child); err == nil {
			proctest.WaitGone(t, pid)
		}
	}
}

// servicesLogLine is what TestRunServices reads of a log line.
type servicesLogLine struct {
	Msg     string `json:"msg"`
	Service string `json:"service"`
	Line    string `json:"line"`
	Result  string `json:"result"`
	Hook    string `json:"hook"`
	PID     int    `json:"pid"`
}

// servicesRun is what one run of TestRunServices saw.
type servicesRun struct {
	code             int
	stopping         bool // the services did what they do, and were stopped
	lines            []servicesLogLine
	steadyOut, child string
	status           httpapi.StatusDoc
}

// runServices runs lanleader with testdata/service.yaml until its services
// have done what they do, then stops it.
func runServices(t *testing.T) servicesRun {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	var run servicesRun
	exits := map[string]int{}
	hooks := 0
	run.code = runStaticLeader(t, "testdata/service.yaml", []string{"--http", addr}, func(b []byte, stop func()) {
		l := decodeLogLine[servicesLogLine](t, b)
		run.lines = append(run.lines, l)
		switch {
		case l.Msg == "services: output" && l.Service == "steady":
			run.steadyOut = l.Line
		case l.Msg == "services: output" && l.Service == "stubborn" && strings.HasPrefix(l.Line, "child "):
			run.child = strings.TrimPrefix(l.Line, "child ")
		case l.Msg == "services: exited while leading; restarting":
			exits[l.Service]++
		case l.Msg == "hooks: output" && l.Hook == "on_service_exit" && strings.HasPrefix(l.Line, "hook crashy 3 "):
			hooks++
		}
		if !run.stopping && exits["crashy"] >= 4 && exits["missing"] >= 3 && hooks >= 2 && run.steadyOut != "" && run.child != "" {
			run.stopping = true
			doc, err := httpapi.FetchStatus(t.Context(), addr)
			if assert.NoError(t, err) {
				run.status = doc
			}
			stop()
		}
	})
	return run
}

// check asserts what TestRunServices expects of a run.
func (run servicesRun) check(t *testing.T) {
	t.Helper()
	assert.Equal(t, ExitOK, run.code)
	require.True(t, run.stopping, "the services did what they do; log: %v", run.lines)
	assert.Equal(t, "steady term=1 node=alpha service=steady", run.steadyOut)
	byName := map[string]jobs.ServiceStatus{}
	for _, s := range run.status.Services {
		byName[s.Name] = s
	}
	assert.Equal(t, jobs.ServiceRunning, byName["steady"].State)
	assert.NotZero(t, byName["steady"].PID)
	assert.Equal(t, uint64(1), byName["steady"].Term)
	assert.GreaterOrEqual(t, byName["crashy"].Restarts, uint64(4))
	assert.Equal(t, "exit 3", byName["crashy"].LastExit)
	assert.Contains(t, byName["missing"].LastExit, "no such file or directory")

	at := func(msg, service string) int {
		for i, l := range run.lines {
			if l.Msg == msg && l.Service == service {
				return i
			}
		}
		t.Fatalf("no %q of %s in the log", msg, service)
		return -1
	}
	leadEnd := at("stopped leading", "")
	for _, svc := range []string{"steady", "stubborn"} {
		i := at("services: stopped", svc)
		assert.Less(t, i, leadEnd, "%s's copy ended before leadership did", svc)
	}
	assert.Contains(t, run.lines[at("services: stopped", "stubborn")].Result, "signal killed", "killed after stop_grace")
	pid, err := strconv.Atoi(run.child)
	require.NoError(t, err)
	proctest.WaitGone(t, pid) // the child in another session is gone too
}
