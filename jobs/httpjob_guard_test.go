package jobs

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pipeServer answers http: jobs' requests over in-memory connections (a
// dial of the real transport, inside a synctest bubble): each dial takes
// connect (fake time), calls connected, then hands the transport one end
// of a pipe whose other end answers 200.
type pipeServer struct {
	connect   time.Duration
	connected func()
	mu        sync.Mutex
	got       []*http.Request
}

func (p *pipeServer) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	t := time.NewTimer(p.connect)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	if p.connected != nil {
		p.connected()
	}
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		req, err := http.ReadRequest(bufio.NewReader(server))
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		p.mu.Lock()
		p.got = append(p.got, req)
		p.mu.Unlock()
		_, _ = io.WriteString(server, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
	}()
	return client, nil
}

func (p *pipeServer) requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

// An http: job's act is its request reaching the application, which comes
// after the connection is made (DNS, connect, TLS: seconds on a bad
// network). The guard is asked right before the process of a command job
// execs; for a request it must be asked right before the request goes out:
// here the connect takes 5 s, and the node may not act by its end (a
// leader stalled past its lease, its leadership not yet seen to end). The
// request must not be sent; the run is refused, as at the exec, and its
// instant owed again. With the guard still saying yes, the same request
// goes out.
func TestHTTPJobAsksTheGuardBeforeItsRequestGoesOut(t *testing.T) {
	for _, lapse := range []bool{false, true} {
		t.Run(map[bool]string{false: "may act", true: "lease lapsed while connecting"}[lapse], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var canRun atomic.Bool
				canRun.Store(true)
				srv := &pipeServer{connect: 5 * time.Second, connected: func() { canRun.Store(!lapse) }}
				sink, recs := &logSink{}, &records{}
				r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{httpJob("digest",
					HTTPRequest{URL: "http://app.lan:8080/jobs/digest"})}, OnRunFinished: recs.add,
					CanRun: canRun.Load, Logger: slog.New(sink)}, nil)
				r.httpDial = srv.dial
				newFakeElector(ctx, "n1", r.Callbacks()).lead(1)
				time.Sleep(time.Minute + 10*time.Second)
				synctest.Wait()
				runs := recs.all()
				if !lapse {
					require.Len(t, runs, 1)
					assert.Equal(t, 1, srv.requests())
					assert.Equal(t, OutcomeOK, runs[0].Outcome, runs[0].Error)
				} else {
					// Nothing of the run was done: its instant is owed
					// again (refused.go), until the node may act.
					assert.Zero(t, srv.requests(), "the request went out after the guard said no")
					assert.Empty(t, runs)
					// Its start is logged already: the attempt's end says
					// why nothing was sent, then that the instant waits,
					// in that order; never "not starting" after it started.
					sink.mu.Lock()
					lines := slices.Clone(sink.records)
					sink.mu.Unlock()
					started, ended := msgIndex(lines, "jobs: run started"), msgIndex(lines, "jobs: attempt ended")
					owed := msgIndex(lines, "jobs: not starting yet: this node cannot currently act as leader; trying again until it can")
					require.True(t, started >= 0 && ended > started && owed > ended, "order: started %d, ended %d, owed %d", started, ended, owed)
					assert.Contains(t, lines[ended]["result"], "request not sent: this node cannot currently act as leader")
					assert.Equal(t, -1, msgIndex(lines, "jobs: not starting: "))
				}
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}
