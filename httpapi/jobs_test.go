package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/jobs"
)

// sampleJobs is a job view with one run of each kind.
func sampleJobs(runs int) []jobs.JobView {
	t0 := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	all := []jobs.RunRecord{
		{Job: "backup", RunID: "a1b2c3d4e5f60718", ScheduledAt: t0, Term: 7, Attempt: 2, Outcome: jobs.OutcomeFailed,
			ExitCode: 3, Started: t0.Add(20 * time.Millisecond), Duration: 90 * time.Second, Node: "nas", Error: "exit status 3"},
		{Job: "backup", RunID: "0f0f0f0f0f0f0f0f", ScheduledAt: t0.Add(-time.Hour), Term: 7, Attempt: 1, Outcome: jobs.OutcomeOK,
			Started: t0.Add(-time.Hour), Duration: 80 * time.Second, Node: "nas", Manual: true},
		{Job: "backup", ScheduledAt: t0.Add(-24 * time.Hour), Term: 5, Outcome: jobs.OutcomeOK, Node: "pi", Heard: true, ExitCode: -1},
	}
	if runs < len(all) {
		all = all[:runs]
	}
	return []jobs.JobView{{Name: "backup", Schedule: "0 2 * * *", Next: []time.Time{t0.Add(24 * time.Hour)}, Runs: all}}
}

func TestJobsEndpoint(t *testing.T) {
	el := newFake(t, election.Callbacks{})
	var asked []int
	h := httpapi.New(httpapi.Config{Elector: el, JobViews: func(n int) []jobs.JobView {
		asked = append(asked, n)
		return sampleJobs(n)
	}}).Handler()

	code, body := get(t, h, "/jobs")
	require.Equal(t, http.StatusOK, code, body)
	var doc httpapi.JobsDoc
	require.NoError(t, json.Unmarshal([]byte(body), &doc))
	assert.Equal(t, "nas", doc.Node)
	require.Len(t, doc.Jobs, 1)
	require.Len(t, doc.Jobs[0].Runs, 3)
	assert.Equal(t, sampleJobs(3)[0].Runs[0].Duration, doc.Jobs[0].Runs[0].Duration)
	assert.True(t, doc.Jobs[0].Runs[1].Manual)
	assert.True(t, doc.Jobs[0].Runs[2].Heard)
	assert.Contains(t, body, `"duration_seconds": 90`)
	assert.Contains(t, body, `"outcome": "failed"`)

	code, _ = get(t, h, "/jobs?runs=1")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, []int{jobs.DefaultHistorySize, 1}, asked, "runs defaults to the history size")
	for _, bad := range []string{"0", "-1", "x", "1001"} {
		code, body = get(t, h, "/jobs?runs="+bad)
		assert.Equal(t, http.StatusBadRequest, code, bad)
		assert.Contains(t, body, "runs=")
	}

	// Without a runner, an empty list (not null).
	_, body = get(t, httpapi.New(httpapi.Config{Elector: el}).Handler(), "/jobs")
	assert.Contains(t, body, `"jobs": []`)
}

func TestFetchJobsAndWriteJobs(t *testing.T) {
	el := newFake(t, election.Callbacks{})
	srv := httpapi.New(httpapi.Config{Elector: el, JobViews: sampleJobs})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	doc, err := httpapi.FetchJobs(ctx, ln.Addr().String(), 2)
	require.NoError(t, err)
	require.Len(t, doc.Jobs[0].Runs, 2)

	doc, err = httpapi.FetchJobs(ctx, ln.Addr().String(), 20)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, httpapi.WriteJobs(&out, doc))
	s := out.String()
	assert.Contains(t, s, `JOB backup  schedule "0 2 * * *"  overlap skip`)
	assert.Contains(t, s, "RUN ID")
	assert.Regexp(t, `a1b2c3d4e5f60718\s+scheduled\s+\S+ \S+\s+nas\s+7\s+\S+ \S+\s+1m30s\s+failed\s+3\s+2`, s)
	assert.Regexp(t, `0f0f0f0f0f0f0f0f\s+manual\s`, s)
	assert.Regexp(t, `-\s+scheduled \(heard\)\s+\S+ \S+\s+pi\s+5\s+-\s+-\s+ok\s+-\s+-`, s)

	out.Reset()
	require.NoError(t, httpapi.WriteJobs(&out, httpapi.JobsDoc{Node: "n"}))
	assert.Equal(t, "node n has no jobs\n", out.String())

	_, err = httpapi.FetchJobs(ctx, "127.0.0.1:1", 1)
	assert.ErrorContains(t, err, "/jobs?runs=1")
}
