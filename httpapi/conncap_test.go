package httpapi_test

import (
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/jobs"
	"github.com/lanleader/lanleader/metrics"
)

// TestIdleConnectionsAreClosed: a connection that sends nothing, one idle
// after a request, and one that sent a single byte of its next request
// (too few to start the header timeout) are all closed by the deadlines;
// one that keeps asking is served.
func TestIdleConnectionsAreClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener("127.0.0.1:7484")
		serve(t, httpapi.New(httpapi.Config{Elector: newFake(t, election.Callbacks{})}), ln)

		silent := ln.dial(t)
		idle := ln.dial(t)
		oneByte := ln.dial(t)
		for _, c := range []*pipeClient{idle, oneByte} {
			code, _, err := c.get("/livez", "localhost")
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, code)
		}
		_, err := io.WriteString(oneByte.conn, "G")
		require.NoError(t, err)

		time.Sleep(httpapi.ReadHeaderTimeout + time.Second)
		assert.True(t, silent.closedByServer(t), "a connection that never sent a request outlived ReadHeaderTimeout")
		assert.False(t, idle.closedByServer(t), "an idle connection closed before IdleTimeout")

		time.Sleep(httpapi.IdleTimeout - httpapi.ReadHeaderTimeout)
		assert.True(t, idle.closedByServer(t), "an idle connection outlived IdleTimeout")
		assert.True(t, oneByte.closedByServer(t), "a connection that sent one byte of its next request outlived IdleTimeout")
	})
}

// TestConnectionCapShedsTheOldestIdle: at the cap, a new connection
// closes the oldest one that is not inside a request; a connection inside
// a request is never closed for a new one, which is closed instead when
// every open connection is busy. Each is counted.
func TestConnectionCapShedsTheOldestIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := metrics.New("test")
		release := make(chan struct{})
		srv := httpapi.New(httpapi.Config{
			Elector:  newFake(t, election.Callbacks{}),
			Metrics:  m,
			MaxConns: 3,
			// /jobs?runs=2 stands for a slow request: it answers once
			// released.
			JobViews: func(runs int) []jobs.JobView {
				if runs == 2 {
					<-release
				}
				return nil
			},
		})
		ln := newPipeListener("127.0.0.1:7484")
		serve(t, srv, ln)

		// Three connections fill the cap: a busy one between two idle ones.
		first := ln.dial(t)
		_, _, err := first.get("/livez", "localhost")
		require.NoError(t, err)
		busy := ln.dial(t)
		busyDone := make(chan int, 1)
		go func() {
			code, _, _ := busy.get("/jobs?runs=2", "localhost")
			busyDone <- code
		}()
		second := ln.dial(t)
		_, _, err = second.get("/livez", "localhost")
		require.NoError(t, err)
		synctest.Wait()

		// A newcomer closes the oldest idle one and is served.
		third := ln.dial(t)
		code, _, err := third.get("/livez", "localhost")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, code)
		assert.True(t, first.closedByServer(t), "the oldest idle connection stays open at the cap")
		assert.False(t, second.closedByServer(t), "a younger idle connection closed")

		// second was used after third: third is now the oldest idle.
		_, _, err = second.get("/livez", "localhost")
		require.NoError(t, err)
		fourth := ln.dial(t)
		_, _, err = fourth.get("/livez", "localhost")
		require.NoError(t, err)
		assert.True(t, third.closedByServer(t), "idleness counts from the last request")
		assert.False(t, second.closedByServer(t))

		// Make every connection busy: the newcomer is the one closed.
		secondDone := make(chan struct{})
		fourthDone := make(chan struct{})
		go func() { _, _, _ = second.get("/jobs?runs=2", "localhost"); close(secondDone) }()
		go func() { _, _, _ = fourth.get("/jobs?runs=2", "localhost"); close(fourthDone) }()
		synctest.Wait()
		late := ln.dial(t)
		assert.True(t, late.closedByServer(t), "a connection admitted while every one is busy")

		close(release)
		assert.Equal(t, http.StatusOK, <-busyDone, "the busy request was cut")
		<-secondDone
		<-fourthDone
		_, body, err := fourth.get("/metrics", "localhost")
		require.NoError(t, err)
		assert.Contains(t, body, `lanleader_http_refused_total{reason="conn_cap"} 3`+"\n")
	})
}
