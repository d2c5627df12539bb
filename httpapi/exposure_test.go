package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/jobs"
	"github.com/lanleader/lanleader/metrics"
)

// secretRun is a finished run whose output holds a secret.
var secretRun = jobs.RunRecord{Job: "push", Outcome: jobs.OutcomeFailed, ExitCode: 22,
	Output: []string{"curl -u admin:TOKEN https://backup.example/push", "curl: (22) 403"}}

// secretServer serves a job whose last run printed a secret.
func secretServer(t *testing.T, m *metrics.Metrics, outputTails bool) *httpapi.Server {
	return httpapi.New(httpapi.Config{
		Elector:     newFake(t, election.Callbacks{}),
		Metrics:     m,
		Hosts:       []string{"NAS.lan."},
		OutputTails: outputTails,
		Jobs: func() []jobs.JobStatus {
			rec := secretRun
			return []jobs.JobStatus{{Name: "push", LastRun: &rec}}
		},
		JobViews: func(int) []jobs.JobView {
			return []jobs.JobView{{Name: "push", Runs: []jobs.RunRecord{secretRun}}}
		},
	})
}

// TestHostMustNameTheEndpoint: a request whose Host is a name other than
// localhost or a listed one (what a DNS rebinding page sends) is refused
// with 421 on every route, counted and logged; IP addresses of the
// endpoint, loopback ones, localhost and listed names are served.
func TestHostMustNameTheEndpoint(t *testing.T) {
	cases := []struct {
		bound   string
		allowed []string
		refused []string
	}{
		{
			bound: "127.0.0.1:7484",
			allowed: []string{"127.0.0.1:7484", "127.0.0.1", "localhost:7484", "LOCALHOST", "localhost.:7484",
				"[::1]:7484", "127.0.0.2", "nas.lan", "nas.LAN.:7484"},
			refused: []string{"evil.example", "evil.example:7484", "127.0.0.1.evil.example", "localhost.evil.example",
				"nas.lan.evil.example", "198.18.0.9:7484", "lanleader"},
		},
		{
			bound:   "198.18.0.9:7484",
			allowed: []string{"198.18.0.9:7484", "[::ffff:198.18.0.9]:7484", "127.0.0.1:7484", "localhost", "nas.lan"},
			refused: []string{"evil.example:7484", "198.18.0.10:7484", "[fe80::1]:7484"},
		},
		{
			// Bound to every address: any IP address of the host may be
			// asked; names still must be listed.
			bound:   "0.0.0.0:7484",
			allowed: []string{"198.18.0.9:7484", "10.0.0.7", "[2001:db8::7]:7484", "localhost", "nas.lan"},
			refused: []string{"evil.example:7484", "nas"},
		},
	}
	for _, c := range cases {
		t.Run(c.bound, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := metrics.New("test")
				ln := newPipeListener(c.bound)
				serve(t, secretServer(t, m, false), ln)
				client := ln.dial(t)
				for _, host := range c.allowed {
					for _, path := range []string{"/status", "/jobs", "/", "/livez"} {
						code, body, err := client.get(path, host)
						require.NoError(t, err)
						assert.Equal(t, http.StatusOK, code, "Host %q %s: %s", host, path, body)
					}
				}
				for _, host := range c.refused {
					for _, path := range []string{"/status", "/jobs", "/", "/livez", "/metrics"} {
						code, body, err := client.get(path, host)
						require.NoError(t, err)
						assert.Equal(t, http.StatusMisdirectedRequest, code, "Host %q %s", host, path)
						assert.NotContains(t, body, "TOKEN")
						assert.Contains(t, body, "election.http_hosts", "the refusal says how to allow a name")
					}
				}
				_, body, err := client.get("/metrics", "127.0.0.1")
				require.NoError(t, err)
				assert.Contains(t, body, `lanleader_http_refused_total{reason="bad_host"} `+strconv.Itoa(5*len(c.refused))+"\n")
			})
		})
	}
}

// TestOutputTailsOnlyOnLoopbackOrOptIn: a run's output tail (which may
// hold a secret a job printed) is served on loopback, left out of /status
// and /jobs when the endpoint is bound beyond loopback, unless the file
// opts in; Handler, not knowing where it is served, leaves it out unless
// opted in.
func TestOutputTailsOnlyOnLoopbackOrOptIn(t *testing.T) {
	cases := []struct {
		bound    string
		optIn    bool
		wantTail bool
	}{
		{"127.0.0.1:7484", false, true},
		{"[::1]:7484", false, true},
		{"198.18.0.9:7484", false, false},
		{"0.0.0.0:7484", false, false},
		{"[::]:7484", false, false},
		{"198.18.0.9:7484", true, true},
		{"0.0.0.0:7484", true, true},
	}
	for _, c := range cases {
		t.Run(c.bound+map[bool]string{true: " opted in", false: ""}[c.optIn], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ln := newPipeListener(c.bound)
				serve(t, secretServer(t, nil, c.optIn), ln)
				client := ln.dial(t)
				_, statusBody, err := client.get("/status", "localhost")
				require.NoError(t, err)
				_, jobsBody, err := client.get("/jobs", "localhost")
				require.NoError(t, err)
				checkTails(t, statusBody, jobsBody, c.wantTail)
			})
		})
	}
	for _, optIn := range []bool{false, true} {
		h := secretServer(t, nil, optIn).Handler()
		_, statusBody := get(t, h, "/status")
		_, jobsBody := get(t, h, "/jobs")
		checkTails(t, statusBody, jobsBody, optIn)
	}
}

// checkTails checks that /status and /jobs carry secretRun's output tail,
// or that neither has it, while the rest of the run is there.
func checkTails(t *testing.T, statusBody, jobsBody string, want bool) {
	t.Helper()
	var st httpapi.StatusDoc
	require.NoError(t, json.Unmarshal([]byte(statusBody), &st), statusBody)
	var statuses []jobs.JobStatus
	require.NoError(t, json.Unmarshal(st.Jobs, &statuses), string(st.Jobs))
	var doc httpapi.JobsDoc
	require.NoError(t, json.Unmarshal([]byte(jobsBody), &doc), jobsBody)
	require.Len(t, statuses, 1)
	require.NotNil(t, statuses[0].LastRun)
	require.Len(t, doc.Jobs, 1)
	require.Len(t, doc.Jobs[0].Runs, 1)
	assert.Equal(t, 22, statuses[0].LastRun.ExitCode, "the rest of the run is served")
	assert.Equal(t, 22, doc.Jobs[0].Runs[0].ExitCode, "the rest of the run is served")
	if want {
		assert.Equal(t, secretRun.Output, statuses[0].LastRun.Output)
		assert.Equal(t, secretRun.Output, doc.Jobs[0].Runs[0].Output)
		return
	}
	for _, body := range []string{statusBody, jobsBody} {
		assert.NotContains(t, body, "output_tail")
		assert.NotContains(t, body, "TOKEN")
	}
}
