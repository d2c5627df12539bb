package jobs

import (
	"context"
	"errors"
	"net"
	"net/http/httptrace"
	"sync/atomic"
)

// sendGuard asks the start check (attemptCall.mayStart) on every write to
// an http: job's connection until the answer starts. The request is the
// job's act, and it goes out only once the connection is made (DNS,
// connect, TLS: seconds on a bad network), long after the check before
// the attempt: a leader that stalled meanwhile past its lease must not
// send it, as a process must not exec then. A write it refuses fails the
// request before any byte of it leaves. Over HTTP/1.1 (the only protocol
// of http: jobs) every write of the request, its final flush included,
// comes before the answer's first byte, and none after.
type sendGuard struct {
	mayStart func() string
	answered atomic.Bool
	refused  atomic.Pointer[string]
}

// errNotSent fails a write the guard refused.
var errNotSent = errors.New("jobs: this node may no longer start it")

// dialer wraps dial (nil: net.Dialer with httpDialTimeout) so that its
// connections ask the guard.
func (g *sendGuard) dialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		dial = (&net.Dialer{Timeout: httpDialTimeout}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return guardedConn{c, g}, nil
	}
}

// trace returns ctx with a client trace that tells the guard when the
// answer starts.
func (g *sendGuard) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotFirstResponseByte: func() { g.answered.Store(true) },
	})
}

// check returns errNotSent if the answer has not started and the start
// check says no.
func (g *sendGuard) check() error {
	if g.mayStart == nil || g.answered.Load() {
		return nil
	}
	if why := g.mayStart(); why != "" {
		g.refused.CompareAndSwap(nil, &why)
		return errNotSent
	}
	return nil
}

// refusedWhy says why the guard refused a write; empty if it did not.
func (g *sendGuard) refusedWhy() string {
	if p := g.refused.Load(); p != nil {
		return *p
	}
	return ""
}

// guardedConn is a connection whose writes ask its guard first.
type guardedConn struct {
	net.Conn
	g *sendGuard
}

func (c guardedConn) Write(b []byte) (int, error) {
	if err := c.g.check(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
