package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/jobs"
)

// TestServicesShown: /status, /jobs, the status page and both tables show
// each service's state, pid, term, restarts, since and last copy.
func TestServicesShown(t *testing.T) {
	since := time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)
	svcs := []jobs.ServiceStatus{
		{Name: "scheduler", State: jobs.ServiceRunning, Since: since, PID: 4242, Term: 7, Restarts: 2, LastExit: "exit 1",
			LastCopy: &jobs.RecordedCopy{Term: 7, Node: "nas", Running: true}},
		{Name: "consumer", State: jobs.ServiceWaiting, Since: since, Term: 7, Waiting: "the copy pi started under term 6 may still be running",
			Next: since.Add(5 * time.Second), LastCopy: &jobs.RecordedCopy{Term: 6, Node: "pi", Running: true}},
	}
	h := httpapi.New(httpapi.Config{Elector: reporting(t, election.Status{Node: "nas", Role: election.Leader, Term: 7,
		Leader: election.LeaderInfo{ID: "nas", Term: 7}}), Services: func() []jobs.ServiceStatus { return svcs }}).Handler()

	doc := statusDoc(t, h)
	assert.Equal(t, svcs[0].PID, doc.Services[0].PID)
	assert.Equal(t, jobs.ServiceWaiting, doc.Services[1].State)
	code, body := get(t, h, "/jobs")
	require.Equal(t, http.StatusOK, code)
	var jd httpapi.JobsDoc
	require.NoError(t, json.Unmarshal([]byte(body), &jd))
	assert.Equal(t, svcs[0].Restarts, jd.Services[0].Restarts)
	_, page := get(t, h, "/")
	assert.Contains(t, page, `id="services"`)
	assert.Contains(t, page, "4242")

	var b strings.Builder
	require.NoError(t, httpapi.WriteTable(&b, doc))
	assert.Contains(t, b.String(), "SERVICES")
	assert.Regexp(t, `scheduler +running +\S+ \S+ \(\S+\) +4242 +7 +2 +exit 1 +running on nas, term 7`, b.String())
	assert.Contains(t, b.String(), "waiting (the copy pi started under term 6 may still be running)")
	b.Reset()
	require.NoError(t, httpapi.WriteJobs(&b, jd))
	assert.Contains(t, b.String(), "SERVICES")
}
