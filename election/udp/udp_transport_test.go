package udp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/internal/proctest"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// freePorts returns n loopback UDP ports that were free a moment ago. The
// sockets are held open together so the ports differ.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		defer c.Close()
		ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
	}
	return ports
}

// loopbackCluster starts n unicast transports on 127.0.0.1 that all share
// one peer list (each node lists itself too, as a shared config file would).
func loopbackCluster(t *testing.T, n int, edit func(i int, c *UDPConfig)) []*UDPTransport {
	t.Helper()
	ports := freePorts(t, n)
	var peers []string
	for _, p := range ports {
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", p))
	}
	var ts []*UDPTransport
	for i, p := range ports {
		cfg := UDPConfig{Bind: "127.0.0.1", Port: p, Peers: peers, Logger: discard}
		if edit != nil {
			edit(i, &cfg)
		}
		tr, err := NewUDPTransport(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { tr.Close() })
		ts = append(ts, tr)
	}
	return ts
}

// recv waits for the next packet; a generous timeout only guards against a
// hung test, it asserts nothing about speed.
func recv(t *testing.T, tr Transport) Packet {
	t.Helper()
	select {
	case p, ok := <-tr.Packets():
		require.True(t, ok, "Packets closed")
		return p
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no packet within 10s")
		return Packet{}
	}
}

func TestUDPUnicastBroadcastReachesEveryPeer(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	ts := loopbackCluster(t, 3, nil)
	a, b, c := ts[0], ts[1], ts[2]
	assert.Len(t, a.Peers(), 2, "a node's own entry in the shared peer list is skipped")
	_, isBroadcast := a.BroadcastAddr()
	assert.False(t, isBroadcast)

	before := time.Now()
	require.NoError(t, a.Broadcast([]byte("hello")))
	for _, r := range []*UDPTransport{b, c} {
		p := recv(t, r)
		assert.Equal(t, "hello", string(p.Data))
		assert.Equal(t, a.LocalAddr(), p.From)
		assert.False(t, p.At.Before(before), "At is the receive time")
	}
	assert.Equal(t, uint64(2), a.Stats().PacketsOut)
	assert.Equal(t, uint64(10), a.Stats().BytesOut)
	assert.Equal(t, uint64(1), b.Stats().PacketsIn)
	for _, tr := range ts {
		require.NoError(t, tr.Close())
	}
}

func TestUDPSendToAndOwnPacketsIgnored(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	ts := loopbackCluster(t, 2, nil)
	a, b := ts[0], ts[1]

	require.NoError(t, a.SendTo([]byte("self"), a.LocalAddr()))
	require.NoError(t, b.SendTo([]byte("marker"), a.LocalAddr()))
	assert.Equal(t, "marker", string(recv(t, a).Data), "a must not receive its own packet")
	require.Eventually(t, func() bool { return a.Stats().DroppedSelf == 1 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, uint64(2), a.Stats().PacketsIn, "its own packet and the marker")
	for _, tr := range ts {
		require.NoError(t, tr.Close())
	}
}

func TestUDPUnlistedSourceIPDropped(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	ts := loopbackCluster(t, 2, nil)
	a, b := ts[0], ts[1]
	// 127.0.0.2 is another loopback address: not listed in the peers.
	stranger, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	require.NoError(t, err)
	defer stranger.Close()
	// A client on a listed host but another port (lanleader who) is heard.
	client, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer client.Close()

	_, err = stranger.WriteToUDPAddrPort([]byte("forged"), a.LocalAddr())
	require.NoError(t, err)
	require.Eventually(t, func() bool { return a.Stats().DroppedUnknownPeer == 1 }, 10*time.Second, time.Millisecond)
	_, err = client.WriteToUDPAddrPort([]byte("query"), a.LocalAddr())
	require.NoError(t, err)
	assert.Equal(t, "query", string(recv(t, a).Data), "the unlisted IP's packet must not be delivered")
	require.NoError(t, b.SendTo([]byte("marker"), a.LocalAddr()))
	assert.Equal(t, "marker", string(recv(t, a).Data))
	for _, tr := range ts {
		require.NoError(t, tr.Close())
	}
}

func TestUDPOversizedDatagramArrivesWhole(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	ts := loopbackCluster(t, 2, nil)
	big := make([]byte, 9000)
	big[len(big)-1] = 7
	require.NoError(t, ts[1].SendTo(big, ts[0].LocalAddr()))
	p := recv(t, ts[0])
	assert.Equal(t, big, p.Data, "not truncated, so the codec sees its real length and rejects it")
	for _, tr := range ts {
		require.NoError(t, tr.Close())
	}
}

func TestUDPQueueFullDrops(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	ts := loopbackCluster(t, 2, func(i int, c *UDPConfig) { c.QueueLen = 1 })
	a, b := ts[0], ts[1]
	for i := range 3 {
		require.NoError(t, b.SendTo([]byte{byte(i)}, a.LocalAddr()))
	}
	require.Eventually(t, func() bool { return a.Stats().DroppedQueueFull == 2 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, uint64(3), a.Stats().PacketsIn, "every datagram read is counted, dropped or not")
	assert.Equal(t, []byte{0}, recv(t, a).Data, "the queued packet is the first")
	for _, tr := range ts {
		require.NoError(t, tr.Close())
	}
}

func TestUDPCloseEndsReaderAndClosesPackets(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	ts := loopbackCluster(t, 2, nil)
	a := ts[0]
	require.NoError(t, a.Close())
	_, ok := <-a.Packets()
	assert.False(t, ok, "Packets is closed after Close")
	err := a.SendTo([]byte("x"), ts[1].LocalAddr())
	assert.ErrorIs(t, err, net.ErrClosed)
	assert.ErrorIs(t, a.Broadcast([]byte("x")), net.ErrClosed)
	assert.NoError(t, a.Close(), "second Close is a no-op")
	require.NoError(t, ts[1].Close())
}

func TestUDPSocketHasBroadcastOption(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	a := loopbackCluster(t, 1, nil)[0]
	raw, err := a.conn.SyscallConn()
	require.NoError(t, err)
	var v int
	var gerr error
	require.NoError(t, raw.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_BROADCAST)
	}))
	require.NoError(t, gerr)
	assert.Equal(t, 1, v)
	require.NoError(t, a.Close())
}

func TestUDPDuplicateBindFails(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	a := loopbackCluster(t, 1, nil)[0]
	_, err := NewUDPTransport(UDPConfig{Bind: "127.0.0.1", Port: int(a.LocalAddr().Port()), Peers: []string{"127.0.0.1:1"}, Logger: discard})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "udp: bind "+a.LocalAddr().String())
	require.NoError(t, a.Close())
}

func TestUDPAnyPort(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	a, err := NewUDPTransport(UDPConfig{Bind: "127.0.0.1", ListenPort: AnyPort, Peers: []string{"127.0.0.1"}, Logger: discard})
	require.NoError(t, err)
	assert.NotZero(t, a.LocalAddr().Port())
	assert.NotEqual(t, uint16(DefaultPort), a.LocalAddr().Port())
	assert.Equal(t, []netip.AddrPort{netip.MustParseAddrPort(fmt.Sprintf("127.0.0.1:%d", DefaultPort))}, a.Peers(),
		"a peer without a port uses Port, not the listen port")
	require.NoError(t, a.Close())
}

func TestUDPConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  UDPConfig
		want string
	}{
		{"port too big", UDPConfig{Bind: "127.0.0.1", Port: 70000, Peers: []string{"127.0.0.1"}}, "port 70000 out of range"},
		{"negative port", UDPConfig{Bind: "127.0.0.1", Port: -5, Peers: []string{"127.0.0.1"}}, "port -5 out of range"},
		{"bad listen port", UDPConfig{Bind: "127.0.0.1", ListenPort: -7, Peers: []string{"127.0.0.1"}}, "listen port -7"},
		{"peer bad port", UDPConfig{Bind: "127.0.0.1", Peers: []string{"127.0.0.1:x"}}, `peer "127.0.0.1:x": bad port "x"`},
		{"peer port zero", UDPConfig{Bind: "127.0.0.1", Peers: []string{"127.0.0.1:0"}}, `bad port "0"`},
		{"peer empty host", UDPConfig{Bind: "127.0.0.1", Peers: []string{":7483"}}, "empty host"},
		{"peer IPv6 for an IPv4 bind", UDPConfig{Bind: "127.0.0.1", Peers: []string{"[::1]:7483"}}, "::1 is not IPv4, as the bind address is"},
		{"peer IPv4 for an IPv6 bind", UDPConfig{Bind: "::1", Peers: []string{"127.0.0.1:7483"}}, "127.0.0.1 is not IPv6, as the bind address is"},
		{"peer link-local without zone", UDPConfig{Bind: "::1", Peers: []string{"[fe80::2]:7483"}}, "link-local fe80::2 needs its interface"},
		{"unicast without peers", UDPConfig{Bind: "127.0.0.1", Mode: ModeUnicast}, "transport unicast needs peers"},
		{"peers with multicast", UDPConfig{Bind: "127.0.0.1", Mode: ModeMulticast, Peers: []string{"127.0.0.2"}}, "peers are listed but transport is multicast"},
		{"IPv6 cannot broadcast", UDPConfig{Bind: "::1", Mode: ModeBroadcast}, "IPv6 has no broadcast"},
		{"loopback cannot multicast", UDPConfig{Bind: "127.0.0.1", Mode: ModeMulticast}, "does not support multicast"},
		{"peer broadcast", UDPConfig{Bind: "127.0.0.1", Peers: []string{"255.255.255.255"}}, "not a node's address"},
		{"loopback cannot broadcast", UDPConfig{Bind: "127.0.0.1"}, "does not support broadcast"},
		{"bad bind", UDPConfig{Bind: "eth0", Peers: []string{"127.0.0.1"}}, `bind "eth0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Logger = discard
			tr, err := NewUDPTransport(tt.cfg)
			require.Error(t, err)
			assert.Nil(t, tr)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestResolvePeersIPv6(t *testing.T) {
	got, err := resolvePeers([]string{"[fd00::2]:9", "fd00::3", "[fd00::4]", "[fe80::5%eth0]:7", "[FD00::2]:9"}, DefaultPort, false)
	require.NoError(t, err)
	assert.Equal(t, []netip.AddrPort{
		netip.MustParseAddrPort("[fd00::2]:9"),
		netip.MustParseAddrPort("[fd00::3]:7483"),
		netip.MustParseAddrPort("[fd00::4]:7483"),
		netip.MustParseAddrPort("[fe80::5%eth0]:7"),
	}, got)
}

// TestUDPIPv6Loopback: two unicast transports on [::1] exchange packets,
// with the source reported as an IPv6 address, and the probe of a closed
// IPv6 port is answered (ICMPv6) at once.
func TestUDPIPv6Loopback(t *testing.T) {
	var ports []int
	var held []*net.UDPConn
	for range 2 {
		c, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
		if err != nil {
			t.Skipf("no IPv6 loopback here: %v", err)
		}
		held = append(held, c) // held together so the ports differ
		ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
	}
	for _, c := range held {
		c.Close()
	}
	peers := []string{fmt.Sprintf("[::1]:%d", ports[0]), fmt.Sprintf("[::1]:%d", ports[1])}
	var ts []*UDPTransport
	for _, p := range ports {
		tr, err := NewUDPTransport(UDPConfig{Bind: "::1", Port: p, Peers: peers, Logger: discard})
		require.NoError(t, err)
		defer tr.Close()
		ts = append(ts, tr)
	}
	require.NoError(t, ts[0].Broadcast([]byte("hello6")))
	p := recv(t, ts[1])
	assert.Equal(t, "hello6", string(p.Data))
	assert.Equal(t, ts[0].LocalAddr(), p.From)
	assert.Equal(t, uint64(1), ts[1].Stats().PacketsIn)

	closed := ts[1].LocalAddr()
	require.NoError(t, ts[1].Close())
	unreachable, err := ts[0].Probe(context.Background(), closed, 10*time.Second)
	require.NoError(t, err)
	assert.True(t, unreachable, "a closed IPv6 port answers unreachable")
}

func TestResolvePeersDedupes(t *testing.T) {
	got, err := resolvePeers([]string{"127.0.0.2", " 127.0.0.2:7483 ", "127.0.0.3:9"}, DefaultPort, true)
	require.NoError(t, err)
	assert.Equal(t, []netip.AddrPort{
		netip.MustParseAddrPort("127.0.0.2:7483"),
		netip.MustParseAddrPort("127.0.0.3:9"),
	}, got)
}

var errFlaky = errors.New("flaky socket")

type readResult struct {
	data []byte
	from netip.AddrPort
	err  error
}

// scriptedReader returns the results sent on its channel, one per read, and
// net.ErrClosed once the channel is closed; it records when each read began.
type scriptedReader struct {
	results chan readResult
	mu      sync.Mutex
	calls   []time.Time
}

func (r *scriptedReader) ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error) {
	r.mu.Lock()
	r.calls = append(r.calls, time.Now())
	r.mu.Unlock()
	res, ok := <-r.results
	if !ok {
		return 0, netip.AddrPort{}, net.ErrClosed
	}
	return copy(b, res.data), res.from, res.err
}

// offsets returns when each read began, relative to start.
func (r *scriptedReader) offsets(start time.Time) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for _, c := range r.calls {
		out = append(out, c.Sub(start))
	}
	return out
}

func TestReadLoopRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		peer := netip.MustParseAddrPort("198.18.0.2:7483")
		tr := &UDPTransport{
			log:     discard,
			local:   netip.MustParseAddrPort("198.18.0.1:7483"),
			packets: make(chan Packet, 4),
			done:    make(chan struct{}),
		}
		r := &scriptedReader{results: make(chan readResult)}
		tr.wg.Add(1)
		go tr.readLoop(r)
		start := time.Now()
		for range 3 {
			r.results <- readResult{err: errFlaky}
		}
		r.results <- readResult{data: []byte("after errors"), from: peer}
		p := <-tr.Packets()
		assert.Equal(t, "after errors", string(p.Data))
		r.results <- readResult{err: errFlaky}
		r.results <- readResult{data: []byte("again"), from: peer}
		assert.Equal(t, "again", string((<-tr.Packets()).Data))
		synctest.Wait() // the loop is blocked in its next read

		ms := time.Millisecond
		assert.Equal(t, []time.Duration{0, 10 * ms, 30 * ms, 70 * ms, 70 * ms, 80 * ms, 80 * ms}, r.offsets(start),
			"backoff doubles from 10ms after each error and resets after a good read")
		assert.Equal(t, uint64(4), tr.Stats().ReadErrors)

		close(tr.done)
		close(r.results)
		tr.wg.Wait()
	})
}

func TestReadLoopStopsDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &UDPTransport{log: discard, packets: make(chan Packet, 1), done: make(chan struct{})}
		r := &scriptedReader{results: make(chan readResult)}
		tr.wg.Add(1)
		go tr.readLoop(r)
		r.results <- readResult{err: errFlaky}
		synctest.Wait() // the loop is now waiting out its backoff
		close(tr.done)
		tr.wg.Wait()
		assert.Len(t, r.offsets(time.Now()), 1, "no read after Close")
	})
}

// Issue 25 item 7: a node started while its link is down resolves its bind
// address (the interface still lists it) but cannot bind the subnet's
// broadcast address: the kernel drops the local broadcast route with the
// link. That is an address not up yet, as for the bind address itself:
// ErrAddressNotUp, which run waits on, not a failure it exits with.
func TestUDPBroadcastAddressNotUpIsNotUp(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	c, err := (&UDPConfig{Bind: "127.0.0.1", Mode: ModeBroadcast, ListenPort: AnyPort, Logger: discard}).withDefaults()
	require.NoError(t, err)
	bind := BindAddr{Addr: netip.MustParseAddr("127.0.0.1"), Interface: "lo",
		Broadcast: netip.MustParseAddr("198.18.0.255")} // on no interface here
	tr, err := newUDPTransport(c, bind, nil, netip.Addr{})
	require.Error(t, err)
	assert.Nil(t, tr)
	assert.ErrorIs(t, err, ErrAddressNotUp, "%v", err)
	assert.Contains(t, err.Error(), "198.18.0.255")
}
