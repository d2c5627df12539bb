package cli

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
)

// standing is an elector that reports one status.
type standing struct{ s election.Status }

func (f standing) Run(ctx context.Context, _ election.Callbacks) error { <-ctx.Done(); return nil }
func (f standing) Status() election.Status                             { return f.s }

// TestIsLeaderExitCodesAgreeWithStatus: is-leader exits 0 exactly when
// /status says may_act, 1 in every other role (a leader that may not act
// included), and prints what /leader said.
func TestIsLeaderExitCodesAgreeWithStatus(t *testing.T) {
	lead := election.LeaderInfo{ID: "nas", Term: 7}
	for _, tc := range []struct {
		name   string
		s      election.Status
		mayAct bool
		code   int
		out    string
	}{
		{"leader", election.Status{Node: "nas", Role: election.Leader, Term: 7, Leader: lead}, true, ExitOK, "nas leads term 7 and may act"},
		{"leader that may not act", election.Status{Node: "nas", Role: election.Leader, Term: 7, Leader: lead}, false, exitNotLeader, "nas may not act: leads term 7 but may not act now"},
		{"follower", election.Status{Node: "pi", Role: election.Follower, Term: 7, Leader: lead}, false, exitNotLeader, "pi may not act: follower; nas leads term 7"},
		{"candidate", election.Status{Node: "pi", Role: election.Candidate, Term: 8}, false, exitNotLeader, "pi may not act: candidate; no leader known"},
		{"follower told may act (a step-down between reads)", election.Status{Node: "pi", Role: election.Follower, Term: 8, Leader: lead}, true, exitNotLeader, "pi may not act"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(httpapi.New(httpapi.Config{Elector: standing{tc.s}, MayAct: func() bool { return tc.mayAct }}).Handler())
			defer srv.Close()
			code, out, errOut := runCLI(t, "is-leader", "--http", srv.URL)
			assert.Equal(t, tc.code, code, "stdout %q stderr %q", out, errOut)
			assert.Contains(t, out, tc.out)
			assert.Empty(t, errOut)

			doc, err := httpapi.FetchStatus(t.Context(), srv.URL)
			require.NoError(t, err)
			assert.Equal(t, *doc.MayAct, code == ExitOK, "/status's may_act agrees with the exit code")

			code, out, _ = runCLI(t, "is-leader", "--quiet", "--http", srv.URL)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, out, "--quiet prints nothing")

			code, out, _ = runCLI(t, "is-leader", "--json", "--http", srv.URL)
			assert.Equal(t, tc.code, code)
			var ld httpapi.LeaderDoc
			require.NoError(t, json.Unmarshal([]byte(out), &ld), out)
			assert.Equal(t, code == ExitOK, ld.MayAct)
		})
	}
}

// TestIsLeaderCannotTell: no answer, or an answer that is not /leader's,
// is exit 4 with the reason on stderr, never 0 or 1.
func TestIsLeaderCannotTell(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())

	old := httptest.NewServer(http.NotFoundHandler()) // a lanleader without /leader
	defer old.Close()
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"node":"nas","role":"leader","may_act":false}`)) // 200 that says no
	}))
	defer liar.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("<html>maintenance</html>")) // a proxy's page
	}))
	defer garbage.Close()

	for _, tc := range []struct {
		name, addr, want string
	}{
		{"nothing listens", closed, "connection refused"},
		{"no /leader route", old.URL, "404 Not Found"},
		{"status code and may_act disagree", liar.URL, "200 OK with may_act false"},
		{"not a /leader document", garbage.URL, "not a /leader document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "is-leader", "--http", tc.addr)
			assert.Equal(t, exitCannotTell, code, "stdout %q stderr %q", out, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, "cannot tell")
			assert.Contains(t, errOut, tc.want)
		})
	}
}

// TestIsLeaderReadsTheAddressFromTheConfig: --config takes election.http;
// a file that turns the endpoint off is a config error (exit 3) naming
// the file and key.
func TestIsLeaderReadsTheAddressFromTheConfig(t *testing.T) {
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Elector: standing{election.Status{Node: "nas", Role: election.Leader,
		Term: 3, Leader: election.LeaderInfo{ID: "nas", Term: 3}}}}).Handler())
	defer srv.Close()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("election:\n  mode: static\n  leader: nas\n  http: "+strings.TrimPrefix(srv.URL, "http://")+"\n"), 0o600))
	off := filepath.Join(dir, "off.yaml")
	require.NoError(t, os.WriteFile(off, []byte("election:\n  mode: static\n  leader: nas\n  http: ''\n"), 0o600))

	code, out, errOut := runCLI(t, "is-leader", "--config", good)
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "nas leads term 3")
	code, _, errOut = runCLI(t, "is-leader", "--config", off)
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, errOut, off+":4: election.http is empty")
}

// TestIsLeaderOfAStoppingDaemon: the daemon's /leader asks the job
// runner's start check, not the role alone. While a stopping leader waits
// for a run that ignores SIGTERM, it still leads (it keeps heartbeating so
// nobody starts the job beside that run) but starts nothing: is-leader
// exits 1 and /status says leader with may_act false.
func TestIsLeaderOfAStoppingDaemon(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	type logLine struct {
		Msg  string `json:"msg"`
		Line string `json:"line"`
	}
	var leading, stopping bool
	code := runStaticLeader(t, "testdata/stubborn.yaml", []string{"--http", addr}, func(b []byte, stop func()) {
		l := decodeLogLine[logLine](t, b)
		switch {
		case l.Msg == "jobs: output" && l.Line == "started" && !leading:
			leading = true
			code, out, errOut := runCLI(t, "is-leader", "--http", addr)
			assert.Equal(t, ExitOK, code, "a leading daemon: %s%s", out, errOut)
			doc, err := httpapi.FetchStatus(t.Context(), addr)
			if assert.NoError(t, err) {
				assert.True(t, *doc.MayAct)
			}
			stop()
		case l.Msg == "jobs: stopping: ending runs before leaving the election":
			stopping = true
			code, out, errOut := runCLI(t, "is-leader", "--http", addr)
			assert.Equal(t, exitNotLeader, code, "a draining leader: %s%s", out, errOut)
			assert.Contains(t, out, "alpha may not act: leads term")
			doc, err := httpapi.FetchStatus(t.Context(), addr)
			if assert.NoError(t, err) {
				assert.Equal(t, election.Leader, doc.Role, "it still leads while its run ends")
				assert.False(t, *doc.MayAct)
			}
		}
	})
	assert.Equal(t, ExitOK, code)
	assert.True(t, leading && stopping, "the log showed a run and the stop")
}
