package udp

import (
	"net"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRawSockaddrRoundTrip: a destination written in the kernel's form
// reads back as the same address, port (network byte order) and zone.
func TestRawSockaddrRoundTrip(t *testing.T) {
	lo, err := net.InterfaceByIndex(1)
	require.NoError(t, err)
	for _, ap := range []netip.AddrPort{
		netip.MustParseAddrPort("198.18.0.1:7483"),
		netip.MustParseAddrPort("[fd00:198:18::1]:258"),
		netip.AddrPortFrom(netip.MustParseAddr("fe80::1").WithZone(lo.Name), 65535),
	} {
		var s rawSender
		require.True(t, s.setDest(ap), ap)
		var r rawReader
		copy((*[unsafe.Sizeof(r.sa)]byte)(unsafe.Pointer(&r.sa))[:], (*[unsafe.Sizeof(s.sa)]byte)(unsafe.Pointer(&s.sa))[:s.salen])
		assert.Equal(t, ap, r.from())
	}
	var s rawSender
	assert.False(t, s.setDest(netip.MustParseAddrPort("[fe80::1%no-such-interface]:1")))
}

// TestRawIOOverLoopback: datagrams sent with raw calls arrive whole, empty
// ones included, and the raw reader names their sender as the net package
// does.
func TestRawIOOverLoopback(t *testing.T) {
	for _, network := range []string{"udp4", "udp6"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "udp6" {
				addr = "[::1]:0"
			}
			a, err := net.ListenPacket(network, addr)
			if err != nil {
				t.Skip("no loopback for", network, err)
			}
			defer a.Close()
			b, err := net.ListenPacket(network, addr)
			require.NoError(t, err)
			defer b.Close()
			ua, ub := a.(*net.UDPConn), b.(*net.UDPConn)
			require.NoError(t, ub.SetReadDeadline(time.Now().Add(10*time.Second))) // a hang guard only

			w, r := writerOf(ua), readerOf(ub)
			require.IsType(t, &rawSender{}, w)
			require.IsType(t, &rawReader{}, r)
			to := ub.LocalAddr().(*net.UDPAddr).AddrPort()
			buf := make([]byte, 100)
			for _, msg := range []string{"heartbeat", ""} {
				n, err := w.WriteToUDPAddrPort([]byte(msg), to)
				require.NoError(t, err)
				assert.Equal(t, len(msg), n)
				n, from, err := r.ReadFromUDPAddrPort(buf)
				require.NoError(t, err)
				assert.Equal(t, msg, string(buf[:n]))
				assert.Equal(t, ua.LocalAddr().(*net.UDPAddr).AddrPort(), from)
			}
		})
	}
}

// TestFdTimerFires: the timerfd fires once armed, also for a deadline
// moved earlier, and stop ends it.
func TestFdTimerFires(t *testing.T) {
	fires := make(chan struct{}, 1)
	lt := newLoopTimer(func() { fires <- struct{}{} })
	require.IsType(t, &fdTimer{}, lt)
	defer lt.stop()
	assert.Nil(t, lt.C(), "a timerfd calls fire; Run must not select on it")
	guard := time.NewTimer(10 * time.Second) // a hang guard only
	defer guard.Stop()
	wait := func() {
		t.Helper()
		select {
		case <-fires:
			lt.fired()
		case <-guard.C:
			t.Fatal("the timer did not fire")
		}
	}
	wait() // armed at once by newLoopTimer
	lt.set(time.Millisecond)
	wait()
	lt.set(time.Hour)
	lt.set(time.Millisecond)
	wait()
}

// TestRawCallsDoNotAllocate: arming the timerfd, a raw send and a raw
// receive make no garbage (an idle node does each once per heartbeat).
func TestRawCallsDoNotAllocate(t *testing.T) {
	lt := newLoopTimer(func() {})
	defer lt.stop()
	d := time.Hour
	assert.Zero(t, testing.AllocsPerRun(100, func() { d += time.Millisecond; lt.set(d) }), "timerfd set")

	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer c.Close()
	uc := c.(*net.UDPConn)
	require.NoError(t, uc.SetReadDeadline(time.Now().Add(10*time.Second))) // a hang guard only
	w, r := writerOf(uc), readerOf(uc)
	self := uc.LocalAddr().(*net.UDPAddr).AddrPort()
	msg, buf := []byte("heartbeat"), make([]byte, 100)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_, _ = w.WriteToUDPAddrPort(msg, self)
		_, _, _ = r.ReadFromUDPAddrPort(buf)
	}), "raw send and receive")
}

// TestRawReadEachDrainsAndWaits: readEach hands over everything queued,
// more than a batch included, and still wakes for a datagram sent after it
// emptied the socket; Close ends it with an error.
func TestRawReadEachDrainsAndWaits(t *testing.T) {
	a, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	ua := a.(*net.UDPConn)
	w := writerOf(ua)
	to := ua.LocalAddr().(*net.UDPAddr).AddrPort()
	r, ok := readerOf(ua).(batchReader)
	require.True(t, ok, "the raw reader reads in batches")

	got := make(chan string, 16)
	done := make(chan error, 1)
	const queued = readBatch + 1 // more than a batch: recvmmsg must be called again
	for i := range queued {
		_, err := w.WriteToUDPAddrPort([]byte{'a' + byte(i)}, to)
		require.NoError(t, err)
	}
	go func() { done <- r.readEach(func(b []byte, _ netip.AddrPort) { got <- string(b) }) }()
	guard := time.NewTimer(10 * time.Second) // a hang guard only
	defer guard.Stop()
	next := func() string {
		select {
		case s := <-got:
			return s
		case <-guard.C:
			require.FailNow(t, "datagram not handed over")
			return ""
		}
	}
	for i := range queued {
		assert.Equal(t, string([]byte{'a' + byte(i)}), next())
	}
	_, err = w.WriteToUDPAddrPort([]byte("late"), to)
	require.NoError(t, err)
	assert.Equal(t, "late", next(), "a datagram after the socket was emptied wakes the reader")
	_, err = w.WriteToUDPAddrPort(nil, to)
	require.NoError(t, err)
	assert.Equal(t, "", next(), "an empty datagram (a probe) is handed over too")

	require.NoError(t, ua.Close())
	select {
	case err := <-done:
		assert.ErrorIs(t, err, net.ErrClosed)
	case <-guard.C:
		require.FailNow(t, "readEach did not return after Close")
	}
}
