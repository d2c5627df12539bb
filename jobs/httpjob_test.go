package jobs

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seenRequest is one request an http: job made, as the fake transport got
// it.
type seenRequest struct {
	Method, URL, Host, Body string
	Header                  http.Header
	At                      time.Time
}

// fakeTransport answers http: jobs' requests in memory, inside a synctest
// bubble: respond decides each answer (nil: 200 "ok"); it may block on the
// request's context or on fake time.
type fakeTransport struct {
	mu      sync.Mutex
	seen    []seenRequest
	respond func(req *http.Request, n int) (*http.Response, error)
}

func (f *fakeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{Method: req.Method, URL: req.URL.String(), Host: req.Host,
		Body: string(body), Header: req.Header.Clone(), At: time.Now()})
	n := len(f.seen)
	f.mu.Unlock()
	if f.respond == nil {
		return answer(req, http.StatusOK, "ok\n"), nil
	}
	return f.respond(req, n)
}

func (f *fakeTransport) all() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.seen...)
}

// answer is a response with status code and body.
func answer(req *http.Request, code int, body string) *http.Response {
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(body)), Request: req, ProtoMajor: 1, ProtoMinor: 1}
}

// httpRunner is a Runner with one http: job, its requests going to tr, its
// runs recorded.
func httpRunner(t *testing.T, tr http.RoundTripper, spec Spec) (*Runner, *records) {
	t.Helper()
	var recs records
	r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{spec}, OnRunFinished: recs.add}, nil)
	r.httpTransport = tr
	return r, &recs
}

func httpJob(name string, req HTTPRequest) Spec {
	return Spec{Name: name, Schedule: "* * * * *", HTTP: &req}
}

// TestHTTPJobSendsTheRunsIdentity: each instant is one request with the
// job's method, headers and body, and the run's identity in headers: the
// Idempotency-Key <job>@<instant>, term, instant, run id, attempt. The
// status code and the body's tail are the run's exit code and output.
func TestHTTPJobSendsTheRunsIdentity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		tr := &fakeTransport{respond: func(req *http.Request, _ int) (*http.Response, error) {
			return answer(req, http.StatusAccepted, "queued\ndigest for 3 people\n"), nil
		}}
		r, recs := httpRunner(t, tr, httpJob("digest", HTTPRequest{Method: "PUT", URL: "http://app.lan:8080/jobs/digest",
			Headers: map[string]string{"Authorization": "Bearer s3cret", "host": "digest.internal"}, Body: `{"kind":"family"}`}))
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(3)
		time.Sleep(2 * time.Minute)
		synctest.Wait()

		seen := tr.all()
		runs := recs.all()
		require.Len(t, seen, 2, "one request per instant")
		require.Len(t, runs, 2)
		for i, req := range seen {
			rec := runs[i]
			at := rec.ScheduledAt.Format(time.RFC3339)
			assert.Equal(t, "PUT", req.Method)
			assert.Equal(t, "http://app.lan:8080/jobs/digest", req.URL)
			assert.Equal(t, "digest.internal", req.Host, "a Host header sets the request's host")
			assert.Equal(t, `{"kind":"family"}`, req.Body)
			assert.Equal(t, "Bearer s3cret", req.Header.Get("Authorization"))
			assert.Equal(t, "digest@"+at, req.Header.Get("Idempotency-Key"))
			assert.Equal(t, "3", req.Header.Get("Lanleader-Term"))
			assert.Equal(t, at, req.Header.Get("Lanleader-Scheduled-At"))
			assert.Equal(t, rec.RunID, req.Header.Get("Lanleader-Run-Id"))
			assert.Equal(t, "1", req.Header.Get("Lanleader-Attempt"))
			assert.Equal(t, "digest", req.Header.Get("Lanleader-Job"))
			assert.Equal(t, "n1", req.Header.Get("Lanleader-Node"))
			assert.Equal(t, "schedule", req.Header.Get("Lanleader-Trigger"))
			assert.Equal(t, OutcomeOK, rec.Outcome, "202 is 2xx")
			assert.Equal(t, http.StatusAccepted, rec.ExitCode)
			assert.Equal(t, []string{"queued", "digest for 3 people"}, rec.Output)
		}
		assert.NotEqual(t, seen[0].Header.Get("Idempotency-Key"), seen[1].Header.Get("Idempotency-Key"))
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// TestHTTPJobRetriesWithOneKey: a refused status is a failed attempt;
// retries send the same Idempotency-Key with the next attempt number, and
// the last status and body tail are what the run, its failure hook and
// history keep.
func TestHTTPJobRetriesWithOneKey(t *testing.T) {
	for _, tc := range []struct {
		name     string
		okAfter  int // the attempt that gets 200; 0: none
		outcome  Outcome
		exitCode int
		errText  string
	}{
		{"third attempt succeeds", 3, OutcomeOK, 200, ""},
		{"every attempt refused", 0, OutcomeFailed, 503, "HTTP 503 Service Unavailable (accept: 2xx)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				tr := &fakeTransport{respond: func(req *http.Request, n int) (*http.Response, error) {
					if n == tc.okAfter {
						return answer(req, http.StatusOK, "done\n"), nil
					}
					return answer(req, http.StatusServiceUnavailable, "database is locked\n"), nil
				}}
				spec := httpJob("report", HTTPRequest{URL: "http://app.lan/report"})
				spec.Retries, spec.RetryDelay = 2, 10*time.Second
				r, recs := httpRunner(t, tr, spec)
				el := newFakeElector(ctx, "n1", r.Callbacks())
				el.lead(5)
				time.Sleep(time.Minute + 30*time.Second)
				synctest.Wait()

				seen := tr.all()
				require.Len(t, seen, 3)
				for i, req := range seen {
					assert.Equal(t, "POST", req.Method, "the default method")
					assert.Equal(t, seen[0].Header.Get("Idempotency-Key"), req.Header.Get("Idempotency-Key"), "one key for every attempt")
					assert.Equal(t, []string{"1", "2", "3"}[i], req.Header.Get("Lanleader-Attempt"))
					if i > 0 {
						assert.Equal(t, 10*time.Second, req.At.Sub(seen[i-1].At), "retry_delay")
					}
				}
				runs := recs.all()
				require.Len(t, runs, 1)
				assert.Equal(t, tc.outcome, runs[0].Outcome)
				assert.Equal(t, 3, runs[0].Attempt)
				assert.Equal(t, tc.exitCode, runs[0].ExitCode)
				if tc.errText != "" {
					assert.Equal(t, tc.errText, runs[0].Error)
					assert.Equal(t, []string{"database is locked"}, runs[0].Output)
				}
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

// TestHTTPJobAbortedOnLeaderLossAndTimeout: a request is aborted (its
// context cancelled) when leadership ends under on_leader_loss: cancel,
// and when the job's timeout passes; with finish it goes on to its answer.
func TestHTTPJobAbortedOnLeaderLossAndTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		loss    LeaderLoss
		timeout time.Duration
		outcome Outcome
		errText string
	}{
		{"leader loss, cancel", LeaderLossCancel, 0, OutcomeCancelled, "cancelled: POST http://app.lan/slow: request aborted"},
		{"leader loss, finish", LeaderLossFinish, 0, OutcomeOK, ""},
		{"timeout", LeaderLossCancel, 20 * time.Second, OutcomeFailed, "timeout after 20s: POST http://app.lan/slow: request aborted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var aborted atomic.Bool
				tr := &fakeTransport{respond: func(req *http.Request, _ int) (*http.Response, error) {
					select {
					case <-req.Context().Done():
						aborted.Store(true)
						return nil, req.Context().Err()
					case <-time.After(time.Minute):
						return answer(req, http.StatusOK, "slow but done\n"), nil
					}
				}}
				spec := httpJob("slow", HTTPRequest{URL: "http://app.lan/slow"})
				spec.Schedule = "0 * * * *"
				spec.OnLeaderLoss, spec.Timeout = tc.loss, tc.timeout
				r, recs := httpRunner(t, tr, spec)
				el := newFakeElector(ctx, "n1", r.Callbacks())
				el.lead(1)
				time.Sleep(time.Hour + 30*time.Second) // the request is in flight
				el.follow("n2", 2)
				time.Sleep(2 * time.Minute)
				synctest.Wait()

				runs := recs.all()
				require.Len(t, runs, 1)
				assert.Equal(t, tc.outcome, runs[0].Outcome)
				assert.Equal(t, tc.errText, runs[0].Error)
				assert.Equal(t, tc.outcome != OutcomeOK, aborted.Load(), "the request's context was cancelled")
				if tc.outcome != OutcomeOK {
					assert.Equal(t, -1, runs[0].ExitCode, "no response")
				}
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

// countingBody is an 8 MiB body of 100-byte lines that counts what was
// read of it.
type countingBody struct{ read atomic.Int64 }

func (b *countingBody) Read(p []byte) (int, error) {
	if left := 8<<20 - b.read.Load(); left <= 0 {
		return 0, io.EOF
	} else if int64(len(p)) > left {
		p = p[:left]
	}
	for i := range p {
		p[i] = 'x'
		if i%100 == 99 {
			p[i] = '\n'
		}
	}
	b.read.Add(int64(len(p)))
	return len(p), nil
}

func (b *countingBody) Close() error { return nil }

// TestHTTPJobReadsABoundedBody: a body of 8 MiB is read up to MaxBodyRead,
// the tail says it was cut, and the run ends.
func TestHTTPJobReadsABoundedBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		body := &countingBody{}
		tr := &fakeTransport{respond: func(req *http.Request, _ int) (*http.Response, error) {
			resp := answer(req, http.StatusOK, "")
			resp.Body = body
			return resp, nil
		}}
		r, recs := httpRunner(t, tr, httpJob("flood", HTTPRequest{URL: "http://app.lan/flood"}))
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(1)
		time.Sleep(90 * time.Second)
		synctest.Wait()
		runs := recs.all()
		require.Len(t, runs, 1)
		assert.Equal(t, OutcomeOK, runs[0].Outcome)
		require.NotEmpty(t, runs[0].Output)
		assert.Equal(t, "(body cut after 1048576 bytes: the rest was not read)", runs[0].Output[len(runs[0].Output)-1])
		assert.LessOrEqual(t, body.read.Load(), int64(MaxBodyRead+64*1024), "read at most the bound and a buffer")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// TestHTTPJobAcceptList: accept names the codes that succeed; others fail,
// 2xx included.
func TestHTTPJobAcceptList(t *testing.T) {
	for _, tc := range []struct {
		accept []string
		code   int
		ok     bool
	}{
		{nil, 204, true}, {nil, 302, false}, {nil, 404, false},
		{[]string{"202"}, 202, true}, {[]string{"202"}, 200, false},
		{[]string{"2xx", "409"}, 409, true}, {[]string{"2xx", "409"}, 410, false},
	} {
		a, err := parseAccept(tc.accept)
		require.NoError(t, err)
		assert.Equal(t, tc.ok, a.has(tc.code), "accept %v, code %d", tc.accept, tc.code)
	}
}
