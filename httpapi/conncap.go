package httpapi

import (
	"net"
	"net/http"
	"sync"
)

// DefaultMaxConns is how many connections the endpoint keeps open at most
// (Config.MaxConns): monitoring, `lanleader status` and a few browser tabs
// need far fewer, and every connection costs the process a file
// descriptor, which job runs need for their pipes.
const DefaultMaxConns = 128

// connCap keeps at most max connections open. A connection that arrives
// at the cap closes the oldest one that is not inside a request (waiting
// for its first request or idle between two), so a flood of idle
// connections costs the newest of them, not the next real client; when
// every open connection is inside a request, the new one is closed. Each
// closed connection is reported to shed.
//
// It sees connections twice: its listener admits them at Accept, and the
// server's ConnState hook (track) tells which are inside a request.
type connCap struct {
	max  int
	shed func(why string)

	mu    sync.Mutex
	conns map[net.Conn]*capped
	seq   uint64 // orders connections by when they last became idle
}

// capped is one open connection as connCap sees it.
type capped struct {
	busy  bool   // inside a request
	since uint64 // connCap.seq when it was accepted or last went idle
}

func newConnCap(max int, shed func(why string)) *connCap {
	return &connCap{max: max, shed: shed, conns: map[net.Conn]*capped{}}
}

// listener wraps ln so that each accepted connection is admitted first.
func (c *connCap) listener(ln net.Listener) net.Listener { return capListener{ln, c} }

type capListener struct {
	net.Listener
	cap *connCap
}

// Accept returns the next connection the cap admits.
func (l capListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.cap.admit(conn) {
			return conn, nil
		}
	}
}

// admit makes room for conn and tracks it, or closes it when every open
// connection is inside a request.
func (c *connCap) admit(conn net.Conn) bool {
	c.mu.Lock()
	var victim net.Conn
	if len(c.conns) >= c.max {
		var oldest *capped
		for k, v := range c.conns {
			if !v.busy && (oldest == nil || v.since < oldest.since) {
				victim, oldest = k, v
			}
		}
		if victim == nil {
			c.mu.Unlock()
			conn.Close()
			c.shed("every connection busy: the new one closed")
			return false
		}
		delete(c.conns, victim)
	}
	c.seq++
	c.conns[conn] = &capped{since: c.seq}
	c.mu.Unlock()
	if victim != nil {
		victim.Close()
		c.shed("the oldest idle connection closed")
	}
	return true
}

// track is the server's ConnState hook.
func (c *connCap) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.conns[conn]
	if !ok {
		return // shed already
	}
	switch state {
	case http.StateActive:
		v.busy = true
	case http.StateIdle:
		c.seq++
		v.busy, v.since = false, c.seq
	case http.StateHijacked, http.StateClosed:
		delete(c.conns, conn)
	}
}
