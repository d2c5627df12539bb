package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/jobs"
	"github.com/lanleader/lanleader/metrics"
)

// fakeElector reports whatever the test feeds its Notifier, the way every
// real mode does.
type fakeElector struct {
	n *election.Notifier
}

func newFake(t *testing.T, cb election.Callbacks) *fakeElector {
	return &fakeElector{n: election.NewNotifier(t.Context(), cb,
		election.Status{Node: "nas", Role: election.Follower})}
}

func (f *fakeElector) Run(ctx context.Context, _ election.Callbacks) error {
	<-ctx.Done()
	return nil
}
func (f *fakeElector) Status() election.Status { return f.n.Status() }

// joinedElector is a fake of env mode: joined without knowing a leader.
type joinedElector struct {
	fakeElector
	joined bool
}

func (j *joinedElector) Joined() bool { return j.joined }

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func statusDoc(t *testing.T, h http.Handler) httpapi.StatusDoc {
	t.Helper()
	code, body := get(t, h, "/status")
	require.Equal(t, http.StatusOK, code, body)
	var doc httpapi.StatusDoc
	require.NoError(t, json.Unmarshal([]byte(body), &doc), body)
	return doc
}

func TestEndpointsFollowTransitionsAndJobs(t *testing.T) {
	m := metrics.New("v1.0.0")
	el := newFake(t, m.Callbacks())
	var (
		mu       sync.Mutex
		statuses = []jobs.JobStatus{{Name: "backup", Schedule: "0 2 * * *", NextRun: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)}}
	)
	h := httpapi.New(httpapi.Config{
		Elector: el,
		Metrics: m,
		Version: "v1.0.0",
		Jobs: func() []jobs.JobStatus {
			mu.Lock()
			defer mu.Unlock()
			return append([]jobs.JobStatus(nil), statuses...)
		},
		Extra: func() any {
			return map[string]any{"peers": []map[string]any{{"id": "pi", "last_seen": "2026-11-30T19:00:00Z"}}}
		},
	}).Handler()

	// Before the elector reports anything: alive, not ready.
	code, body := get(t, h, "/livez")
	assert.Equal(t, http.StatusOK, code)
	code, body = get(t, h, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "no leader known")
	doc := statusDoc(t, h)
	assert.Equal(t, "nas", doc.Node)
	assert.Equal(t, election.Follower, doc.Role)
	assert.False(t, doc.Ready)
	assert.True(t, doc.Since.IsZero())
	assert.Equal(t, "v1.0.0", doc.Version)
	var got []jobs.JobStatus
	require.NoError(t, json.Unmarshal(doc.Jobs, &got), string(doc.Jobs))
	assert.Equal(t, []jobs.JobStatus{{Name: "backup", Schedule: "0 2 * * *", NextRun: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)}}, got)
	assert.JSONEq(t, `{"peers":[{"id":"pi","last_seen":"2026-11-30T19:00:00Z"}]}`, string(doc.Extra))

	steps := []struct {
		name      string
		s         election.Status
		ready     bool
		readyBody string
		metrics   []string
	}{
		{
			name:  "follows pi",
			s:     election.Status{Node: "nas", Role: election.Follower, Term: 3, Since: time.Unix(1000, 0).UTC(), Leader: election.LeaderInfo{ID: "pi", Addr: "192.168.1.7:7483", Term: 3}},
			ready: true, readyBody: "following pi, term 3",
			metrics: []string{"lanleader_is_leader 0", "lanleader_has_leader 1", "lanleader_term 3", "lanleader_leader_changes_total 1"},
		},
		{
			name:  "pi lost, candidate",
			s:     election.Status{Node: "nas", Role: election.Candidate, Term: 4, Since: time.Unix(2000, 0).UTC()},
			ready: false, readyBody: "role candidate, term 4",
			metrics: []string{"lanleader_is_leader 0", "lanleader_has_leader 0", "lanleader_term 3"},
		},
		{
			name:  "leads",
			s:     election.Status{Node: "nas", Role: election.Leader, Term: 4, Since: time.Unix(2001, 0).UTC(), Leader: election.LeaderInfo{ID: "nas", Term: 4}},
			ready: true, readyBody: "leading, term 4",
			metrics: []string{"lanleader_is_leader 1", "lanleader_has_leader 1", "lanleader_term 4", "lanleader_leader_changes_total 2"},
		},
	}
	for _, st := range steps {
		el.n.Update(st.s)

		doc := statusDoc(t, h)
		assert.Equal(t, st.s.Node, doc.Node, st.name)
		assert.Equal(t, st.s.Role, doc.Role, st.name)
		assert.Equal(t, st.s.Term, doc.Term, st.name)
		assert.Equal(t, st.s.Leader, doc.Leader, st.name)
		assert.True(t, st.s.Since.Equal(doc.Since), st.name)
		assert.Equal(t, st.ready, doc.Ready, st.name)

		code, body := get(t, h, "/readyz")
		if st.ready {
			assert.Equal(t, http.StatusOK, code, st.name)
		} else {
			assert.Equal(t, http.StatusServiceUnavailable, code, st.name)
		}
		assert.Contains(t, body, st.readyBody, st.name)

		code, body = get(t, h, "/metrics")
		require.Equal(t, http.StatusOK, code)
		for _, want := range st.metrics {
			assert.Contains(t, body, want+"\n", st.name)
		}
	}

	// A job finishes: the runner records it in metrics and in its view.
	m.JobFinished("backup", "ok", 42*time.Second)
	mu.Lock()
	statuses[0].LastRun = &jobs.RunRecord{Job: "backup", Outcome: jobs.OutcomeOK, Duration: 42 * time.Second}
	mu.Unlock()

	doc = statusDoc(t, h)
	got = nil
	require.NoError(t, json.Unmarshal(doc.Jobs, &got), string(doc.Jobs))
	require.Len(t, got, 1)
	require.NotNil(t, got[0].LastRun, string(doc.Jobs))
	assert.Equal(t, jobs.OutcomeOK, got[0].LastRun.Outcome)
	assert.Equal(t, 42*time.Second, got[0].LastRun.Duration)
	_, body = get(t, h, "/metrics")
	assert.Contains(t, body, `lanleader_job_runs_total{job_name="backup",result="ok"} 1`)
	assert.Contains(t, body, `lanleader_job_duration_seconds_sum{job_name="backup"} 42`)
	assert.Contains(t, body, `lanleader_build_info{goversion=`)
}

func TestReadyzJoinedWithoutLeader(t *testing.T) {
	el := &joinedElector{fakeElector: *newFake(t, election.Callbacks{})}
	h := httpapi.New(httpapi.Config{Elector: el}).Handler()

	code, _ := get(t, h, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)

	el.n.Update(election.Status{Node: "nas", Role: election.Follower, Term: 1})
	el.joined = true
	code, body := get(t, h, "/readyz")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "joined")
	assert.True(t, statusDoc(t, h).Ready)
}

func TestStatusOptionalParts(t *testing.T) {
	el := newFake(t, election.Callbacks{})
	h := httpapi.New(httpapi.Config{Elector: el}).Handler()
	_, body := get(t, h, "/status")
	assert.NotContains(t, body, `"jobs"`)
	assert.NotContains(t, body, `"extra"`)
	assert.NotContains(t, body, `"since"`, "zero Since is left out")

	code, _ := get(t, h, "/metrics")
	assert.Equal(t, http.StatusNotFound, code, "no Metrics, no /metrics")
}

// A view that cannot be encoded costs its own part, not the whole status.
func TestStatusBadViewIsAWarning(t *testing.T) {
	el := newFake(t, election.Callbacks{})
	h := httpapi.New(httpapi.Config{
		Elector: el,
		Jobs:    func() []jobs.JobStatus { return []jobs.JobStatus{{Name: "fine"}} },
		Extra:   func() any { return map[string]any{"broken": make(chan int)} },
	}).Handler()
	doc := statusDoc(t, h)
	assert.Nil(t, doc.Extra)
	assert.Contains(t, string(doc.Jobs), `"fine"`)
	require.Len(t, doc.Warnings, 1)
	assert.Contains(t, doc.Warnings[0], "extra:")
}

func TestMethodsAndUnknownPaths(t *testing.T) {
	h := httpapi.New(httpapi.Config{Elector: newFake(t, election.Callbacks{})}).Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/status", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)

	code, _ := get(t, h, "/nope")
	assert.Equal(t, http.StatusNotFound, code)
	code, body := get(t, h, "/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "/status")
}

// Serve on a real loopback socket: FetchStatus reads what /status serves,
// and cancelling ctx shuts the server down and returns nil.
func TestServeAndFetchStatus(t *testing.T) {
	el := newFake(t, election.Callbacks{})
	el.n.Update(election.Status{Node: "nas", Role: election.Leader, Term: 9, Since: time.Unix(5000, 0).UTC(),
		Leader: election.LeaderInfo{ID: "nas", Term: 9}})
	srv := httpapi.New(httpapi.Config{Elector: el, Jobs: func() []jobs.JobStatus { return []jobs.JobStatus{{Name: "digest", Schedule: "30 6 * * *"}} }})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln) }()

	for _, a := range []string{addr, "http://" + addr, "http://" + addr + "/"} {
		doc, err := httpapi.FetchStatus(t.Context(), a)
		require.NoError(t, err, a)
		assert.Equal(t, election.Leader, doc.Role)
		assert.Equal(t, uint64(9), doc.Term)
		assert.True(t, doc.Ready)
		assert.Contains(t, string(doc.Jobs), `"digest"`)
	}

	cancel()
	require.NoError(t, <-done)
	_, err = httpapi.FetchStatus(t.Context(), addr)
	require.Error(t, err, "server still answering after shutdown")
	assert.Contains(t, err.Error(), "http://"+addr+"/status")
}

func TestServeListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	srv := httpapi.New(httpapi.Config{Elector: newFake(t, election.Callbacks{})})
	err = srv.Serve(t.Context(), ln.Addr().String())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "httpapi: listen "+ln.Addr().String())
}

func TestFetchStatusNon200(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer ts.Close()
	_, err := httpapi.FetchStatus(t.Context(), ts.URL)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503")
	assert.Contains(t, err.Error(), "busy")

	ts2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "{not json")
	}))
	defer ts2.Close()
	_, err = httpapi.FetchStatus(t.Context(), strings.TrimPrefix(ts2.URL, "http://"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "decode")
}

func TestDefaultAddrIsLoopback(t *testing.T) {
	host, _, err := net.SplitHostPort(httpapi.DefaultAddr)
	require.NoError(t, err)
	assert.True(t, net.ParseIP(host).IsLoopback())
}
