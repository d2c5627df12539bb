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
	lt := newLoopTimer()
	require.IsType(t, &fdTimer{}, lt)
	defer lt.stop()
	guard := time.NewTimer(10 * time.Second) // a hang guard only
	defer guard.Stop()
	wait := func() {
		t.Helper()
		select {
		case <-lt.C():
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
	lt := newLoopTimer()
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
