package jobs

import (
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests make real requests on loopback (outside synctest: a bubble
// cannot hold a real socket), through the transport a daemon uses.

// runHTTPOnce runs spec's job once, at once, and returns its record.
func runHTTPOnce(t *testing.T, spec Spec) RunRecord {
	t.Helper()
	r, recs := newHTTPOnce(t, spec)
	return runOnce(t, r, recs)
}

// newHTTPOnce is runHTTPOnce's Runner, for a test that changes something
// between the job's validation and its run.
func newHTTPOnce(t *testing.T, spec Spec) (*Runner, *records) {
	t.Helper()
	var recs records
	return newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{spec}, OnRunFinished: recs.add}, nil), &recs
}

// runOnce fires r's job once, now, and returns its record.
func runOnce(t *testing.T, r *Runner, recs *records) RunRecord {
	t.Helper()
	startRun(t, r, r.jobs[0], time.Now().Truncate(time.Second), 1)
	require.NoError(t, r.Wait(t.Context()))
	runs := recs.all()
	require.Len(t, runs, 1)
	return runs[0]
}

// TestHTTPJobDoesNotFollowRedirects: a 3xx is the answer, a failure unless
// accepted, and its target is never asked.
func TestHTTPJobDoesNotFollowRedirects(t *testing.T) {
	var followed atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Store(true) }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	}))
	defer srv.Close()

	rec := runHTTPOnce(t, httpJob("moved", HTTPRequest{URL: srv.URL + "/job"}))
	assert.Equal(t, OutcomeFailed, rec.Outcome)
	assert.Equal(t, http.StatusFound, rec.ExitCode)
	assert.Equal(t, "HTTP 302 Found, redirect to "+target.URL+"/elsewhere not followed (accept: 2xx)", rec.Error)
	assert.False(t, followed.Load(), "the redirect's target was asked")

	rec = runHTTPOnce(t, httpJob("moved", HTTPRequest{URL: srv.URL + "/job", Accept: []string{"302"}}))
	assert.Equal(t, OutcomeOK, rec.Outcome, "a redirect the job accepts")
}

// TestHTTPJobVerifiesCertificates: an https URL whose certificate does not
// chain to the system's CAs fails with a hint; with ca_file naming its CA
// it succeeds; a certificate for another name fails.
func TestHTTPJobVerifiesCertificates(t *testing.T) {
	srv := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("secure\n")) }))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))

	rec := runHTTPOnce(t, httpJob("tls", HTTPRequest{URL: srv.URL}))
	assert.Equal(t, OutcomeFailed, rec.Outcome)
	assert.Equal(t, -1, rec.ExitCode)
	assert.Contains(t, rec.Error, "certificate signed by unknown authority")
	assert.Contains(t, rec.Error, "http.ca_file")

	rec = runHTTPOnce(t, httpJob("tls", HTTPRequest{URL: srv.URL, CAFile: ca}))
	assert.Equal(t, OutcomeOK, rec.Outcome, rec.Error)
	assert.Equal(t, []string{"secure"}, rec.Output)

	// httptest's certificate names 127.0.0.1 and example.com, not localhost.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	rec = runHTTPOnce(t, httpJob("tls", HTTPRequest{URL: "https://localhost:" + port, CAFile: ca}))
	assert.Equal(t, OutcomeFailed, rec.Outcome)
	assert.Contains(t, rec.Error, "the URL's host must be a name or address the certificate lists")
}

// TestHTTPJobUnreachable: nothing listening is a failed run at once, with
// the address and the reason, no status code.
func TestHTTPJobUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	rec := runHTTPOnce(t, httpJob("gone", HTTPRequest{URL: "http://" + addr + "/job"}))
	assert.Equal(t, OutcomeFailed, rec.Outcome)
	assert.Equal(t, -1, rec.ExitCode)
	assert.Contains(t, rec.Error, "POST http://"+addr+"/job: dial tcp "+addr)
	assert.Contains(t, rec.Error, "connection refused")
}

// TestHTTPJobCAFileGoneAtRunTime: ca_file is read at each attempt; a file
// removed since the config was loaded fails the run, naming it.
func TestHTTPJobCAFileGoneAtRunTime(t *testing.T) {
	srv := quietTLSServer(http.NotFoundHandler())
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
	r, recs := newHTTPOnce(t, httpJob("tls", HTTPRequest{URL: srv.URL, CAFile: ca}))
	require.NoError(t, os.Remove(ca))
	rec := runOnce(t, r, recs)
	assert.Equal(t, OutcomeFailed, rec.Outcome)
	assert.Contains(t, rec.Error, "http.ca_file: open "+ca)
}

// quietTLSServer is httptest's TLS server without its log of the
// handshakes these tests make fail on purpose.
func quietTLSServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}
