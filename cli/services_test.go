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
func TestRunServices(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	type logLine struct {
		Msg     string `json:"msg"`
		Service string `json:"service"`
		Line    string `json:"line"`
		Result  string `json:"result"`
		Hook    string `json:"hook"`
		PID     int    `json:"pid"`
	}
	var lines []logLine
	var steadyOut, child string
	var status httpapi.StatusDoc
	exits := map[string]int{}
	hooks := 0
	stopping := false
	code := runStaticLeader(t, "testdata/service.yaml", []string{"--http", addr}, func(b []byte, stop func()) {
		l := decodeLogLine[logLine](t, b)
		lines = append(lines, l)
		switch {
		case l.Msg == "services: output" && l.Service == "steady":
			steadyOut = l.Line
		case l.Msg == "services: output" && l.Service == "stubborn" && strings.HasPrefix(l.Line, "child "):
			child = strings.TrimPrefix(l.Line, "child ")
		case l.Msg == "services: exited while leading; restarting":
			exits[l.Service]++
		case l.Msg == "hooks: output" && l.Hook == "on_service_exit" && strings.HasPrefix(l.Line, "hook crashy 3 "):
			hooks++
		}
		if !stopping && exits["crashy"] >= 4 && exits["missing"] >= 3 && hooks >= 2 && steadyOut != "" && child != "" {
			stopping = true
			doc, err := httpapi.FetchStatus(t.Context(), addr)
			if assert.NoError(t, err) {
				status = doc
			}
			stop()
		}
	})
	assert.Equal(t, ExitOK, code)
	require.True(t, stopping, "the services did what they do; log: %v", lines)
	assert.Equal(t, "steady term=1 node=alpha service=steady", steadyOut)
	byName := map[string]jobs.ServiceStatus{}
	for _, s := range status.Services {
		byName[s.Name] = s
	}
	assert.Equal(t, jobs.ServiceRunning, byName["steady"].State)
	assert.NotZero(t, byName["steady"].PID)
	assert.Equal(t, uint64(1), byName["steady"].Term)
	assert.GreaterOrEqual(t, byName["crashy"].Restarts, uint64(4))
	assert.Equal(t, "exit 3", byName["crashy"].LastExit)
	assert.Contains(t, byName["missing"].LastExit, "no such file or directory")

	at := func(msg, service string) int {
		for i, l := range lines {
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
	assert.Contains(t, lines[at("services: stopped", "stubborn")].Result, "signal killed", "killed after stop_grace")
	pid, err := strconv.Atoi(child)
	require.NoError(t, err)
	proctest.WaitGone(t, pid) // the child in another session is gone too
}
