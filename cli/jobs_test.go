package cli

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/static"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/jobs"
)

// `lanleader jobs` reads a real runner's view through a real endpoint.
func TestJobsCommand(t *testing.T) {
	runner, err := jobs.NewRunner(idle, jobs.RunnerConfig{Node: "nas", Jobs: []jobs.Spec{
		{Name: "backup", Schedule: "0 2 * * *", Command: []string{"/bin/true"}},
	}})
	require.NoError(t, err)
	el, err := static.New(static.Config{Leader: "elsewhere", NodeID: "nas",
		InterfaceAddrs: func() ([]netip.Addr, error) { return nil, nil }})
	require.NoError(t, err)
	srv := httpapi.New(httpapi.Config{Elector: el, JobViews: runner.Jobs})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	code, out, errOut := runCLI(t, "jobs", "--http", ln.Addr().String())
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `JOB backup  schedule "0 2 * * *"`)
	assert.Contains(t, out, "no runs yet")

	code, out, errOut = runCLI(t, "jobs", "--http", ln.Addr().String(), "--json", "--runs", "3")
	require.Equal(t, 0, code, errOut)
	var doc httpapi.JobsDoc
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Jobs, 1)
	require.Len(t, doc.Jobs[0].Next, jobs.NextCount)
	assert.Equal(t, 2, doc.Jobs[0].Next[0].In(time.Local).Hour())

	code, _, errOut = runCLI(t, "jobs", "--runs", "0")
	assert.Equal(t, 2, code, "a bad --runs is a usage error")
	assert.Contains(t, errOut, "--runs 0")
	code, _, errOut = runCLI(t, "jobs", "--http", "127.0.0.1:1", "--timeout", "1s")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "is lanleader running")
}
