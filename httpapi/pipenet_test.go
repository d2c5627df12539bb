package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/httpapi"
)

// pipeListener is a net.Listener over net.Pipe that claims to be bound at
// addr: the endpoint served at any address (beyond loopback too) without
// a socket, inside a synctest bubble, where its deadlines run on the
// bubble's clock.
type pipeListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener(addr string) *pipeListener {
	return &pipeListener{
		addr:  net.TCPAddrFromAddrPort(netip.MustParseAddrPort(addr)),
		conns: make(chan net.Conn),
		done:  make(chan struct{}),
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return l.addr }

// dial opens a connection to the server accepting on l.
func (l *pipeListener) dial(t *testing.T) *pipeClient {
	t.Helper()
	client, server := net.Pipe()
	t.Cleanup(func() { client.Close() })
	select {
	case l.conns <- server:
	case <-l.done:
		require.FailNow(t, "dial: listener closed")
	}
	return &pipeClient{conn: client, r: bufio.NewReader(client)}
}

// pipeClient is one client connection speaking HTTP/1.1 by hand, so a
// test says exactly what goes over it and when.
type pipeClient struct {
	conn net.Conn
	r    *bufio.Reader
}

// get sends a GET of path with Host host (none if empty) and reads the
// answer; the connection stays open (keep-alive).
func (c *pipeClient) get(path, host string) (int, string, error) {
	req := "GET " + path + " HTTP/1.1\r\n"
	if host != "" {
		req += "Host: " + host + "\r\n"
	}
	if _, err := io.WriteString(c.conn, req+"\r\n"); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// closedByServer reports whether the server closed the connection. Call
// it inside a synctest bubble: it lets the bubble settle first. net.Pipe
// refuses a deadline once either end is closed, and this end is open until
// the test ends; if the server's end is open too, a read with a deadline
// already past must time out (nothing is left unread).
func (c *pipeClient) closedByServer(t *testing.T) bool {
	t.Helper()
	synctest.Wait()
	if err := c.conn.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		require.ErrorIs(t, err, io.ErrClosedPipe)
		return true
	}
	_, err := c.r.ReadByte()
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "the connection had something to read")
	require.NoError(t, c.conn.SetReadDeadline(time.Time{}))
	return false
}

// serve runs srv on ln until the test ends.
func serve(t *testing.T, srv *httpapi.Server, ln net.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}
