package jobs

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// httpLogRun runs one instant of an http: job whose requests tr answers
// and returns its run and the runner's log lines of that run, in order.
func httpLogRun(t *testing.T, tr http.RoundTripper) (RunRecord, []map[string]string) {
	t.Helper()
	var rec RunRecord
	var lines []map[string]string
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		sink, recs := &logSink{}, &records{}
		r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{httpJob("report", HTTPRequest{URL: "http://app.lan/report"})},
			OnRunFinished: recs.add, Logger: slog.New(sink)}, nil)
		r.httpTransport = tr
		newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
		time.Sleep(70 * time.Second)
		synctest.Wait()
		runs := recs.all()
		require.Len(t, runs, 1)
		rec = runs[0]
		sink.mu.Lock()
		for _, l := range sink.records {
			if l["run_id"] == rec.RunID {
				lines = append(lines, l)
			}
		}
		sink.mu.Unlock()
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
	return rec, lines
}

// msgIndex is the index of the first line whose msg starts with prefix;
// -1 if none.
func msgIndex(lines []map[string]string, prefix string) int {
	return slices.IndexFunc(lines, func(l map[string]string) bool { return strings.HasPrefix(l["msg"], prefix) })
}

// A body longer than MaxBodyRead is cut mid-line. What was read is logged
// whole (every byte up to the bound, in "jobs: output" lines), the piece
// the bound cut is marked partial (it is not a line the application
// wrote), the attempt's result says the body was cut, and the run's tail
// keeps the last lines, valid UTF-8 though the body's characters are
// two bytes and a tail line is cut at maxTailLine bytes.
func TestHTTPJobBodyCutAtItsBoundIsSaidSo(t *testing.T) {
	line := "x" + strings.Repeat("é", 300) + "\n" // 602 bytes: its tail line is cut inside an "é"
	body := strings.Repeat(line, MaxBodyRead/len(line)+10)
	rec, lines := httpLogRun(t, &fakeTransport{respond: func(req *http.Request, _ int) (*http.Response, error) {
		return answer(req, http.StatusOK, body), nil
	}})
	assert.Equal(t, OutcomeOK, rec.Outcome, rec.Error)

	var out []map[string]string
	for _, l := range lines {
		if l["msg"] == "jobs: output" {
			out = append(out, l)
		}
	}
	require.GreaterOrEqual(t, len(out), 2)
	marker := out[len(out)-1]
	assert.Equal(t, "(body cut after 1048576 bytes: the rest was not read)", marker["line"])
	read := 0
	for _, l := range out[:len(out)-1] {
		read += len(l["line"])
		if l["partial"] != "true" {
			read++ // its newline
		}
	}
	assert.Equal(t, MaxBodyRead, read, "every byte read up to the bound is logged, each line once")
	cutPiece := out[len(out)-2]
	assert.Equal(t, "true", cutPiece["partial"], "the piece cut at the bound is logged as a whole line: %.40q", cutPiece["line"])

	ended := lines[msgIndex(lines, "jobs: attempt ended")]
	assert.Contains(t, ended["result"], "body cut after 1048576 bytes")
	require.NotEmpty(t, rec.Output)
	assert.Equal(t, marker["line"], rec.Output[len(rec.Output)-1])
	for _, l := range rec.Output {
		assert.True(t, utf8.ValidString(l), "tail line not valid UTF-8: %.40q", l)
	}
}

// A request that fails (no answer, a redirect not followed, a status not
// accepted) after "run started" is logged in that order: the run started,
// the attempt ended with why, the run failed (ERROR) with why.
func TestHTTPJobFailureIsLoggedAfterItsStart(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		respond   func(req *http.Request, _ int) (*http.Response, error)
	}{
		{"connection refused", "connect: connection refused", func(*http.Request, int) (*http.Response, error) {
			return nil, errors.New("dial tcp 198.18.0.9:80: connect: connection refused")
		}},
		{"redirect", "redirect to https://app.lan/report not followed", func(req *http.Request, _ int) (*http.Response, error) {
			resp := answer(req, http.StatusFound, "")
			resp.Header.Set("Location", "https://app.lan/report")
			return resp, nil
		}},
		{"not accepted", "HTTP 500 Internal Server Error (accept: 2xx)", func(req *http.Request, _ int) (*http.Response, error) {
			return answer(req, http.StatusInternalServerError, "boom\n"), nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, lines := httpLogRun(t, &fakeTransport{respond: tc.respond})
			assert.Equal(t, OutcomeFailed, rec.Outcome)
			started, ended, failed := msgIndex(lines, "jobs: run started"), msgIndex(lines, "jobs: attempt ended"), msgIndex(lines, "jobs: run failed")
			require.True(t, started >= 0 && ended > started && failed > ended, "order: started %d, ended %d, failed %d", started, ended, failed)
			assert.Contains(t, lines[ended]["result"], tc.why)
			assert.Equal(t, "ERROR", lines[failed]["level"])
			assert.Contains(t, lines[failed]["error"], tc.why)
			assert.Equal(t, -1, msgIndex(lines, "jobs: not start"), "a run that started is not said not to start")
		})
	}
}

// A manual run's request the guard refuses once its connection is made
// comes after "run started": the log then says the run was cancelled
// before it acted, and why (WARN), not that it is "not starting". (A
// scheduled run's instant is owed again instead: the guard test.)
func TestHTTPJobManualRunRefusedAfterItsStartIsLoggedAsCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var canRun atomic.Bool
		canRun.Store(true)
		srv := &pipeServer{connect: 5 * time.Second, connected: func() { canRun.Store(false) }}
		sink, recs := &logSink{}, &records{}
		spec := httpJob("digest", HTTPRequest{URL: "http://app.lan:8080/jobs/digest"})
		spec.Schedule = "0 0 1 1 *"
		r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{spec}, OnRunFinished: recs.add, CanRun: canRun.Load,
			Logger: slog.New(sink)}, nil)
		r.httpDial = srv.dial
		newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
		synctest.Wait()
		got, err := r.Trigger("digest")
		require.NoError(t, err)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Zero(t, srv.requests())
		runs := recs.all()
		require.Len(t, runs, 1)
		assert.Equal(t, OutcomeCancelled, runs[0].Outcome)
		assert.Equal(t, "cancelled before it acted: this node cannot currently act as leader", runs[0].Error)
		var lines []map[string]string
		sink.mu.Lock()
		for _, l := range sink.records {
			if l["run_id"] == got.RunID {
				lines = append(lines, l)
			}
		}
		sink.mu.Unlock()
		started := msgIndex(lines, "jobs: run started")
		cancelled := msgIndex(lines, "jobs: run cancelled before it acted: this node cannot currently act as leader")
		require.True(t, started >= 0 && cancelled > started, "order: started %d, cancelled %d", started, cancelled)
		assert.Equal(t, "WARN", lines[cancelled]["level"])
		assert.Equal(t, -1, msgIndex(lines, "jobs: not start"), "a run that started is not said not to start")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}
