package udp

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/internal/proctest"
)

// TestProbeClosedPortAnswersAtOnce: a probe of a loopback port nobody holds
// is answered by the kernel's "port unreachable" at once, long before the
// probe's wait runs out.
func TestProbeClosedPortAnswersAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	trs := loopbackCluster(t, 1, nil)
	defer closeAll(t, trs)
	closed := freePorts(t, 1)[0] // free a moment ago, closed now
	const wait = 10 * time.Second
	start := time.Now()
	unreachable, err := trs[0].Probe(context.Background(), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(closed)), wait)
	require.NoError(t, err)
	assert.True(t, unreachable, "a closed port must answer unreachable")
	assert.Less(t, time.Since(start), wait/2, "the answer must not be the wait running out")
}

// TestProbeLiveNodeIsSilent: a probe of a live transport gets no answer and
// is counted there, not delivered as a packet.
func TestProbeLiveNodeIsSilent(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	trs := loopbackCluster(t, 2, nil)
	defer closeAll(t, trs)
	unreachable, err := trs[0].Probe(context.Background(), trs[1].LocalAddr(), 50*time.Millisecond)
	require.NoError(t, err)
	assert.False(t, unreachable)
	require.Eventually(t, func() bool { return trs[1].Stats().ProbesIn == 1 }, 10*time.Second, time.Millisecond)
	// The next real packet is the first delivered: the probe was not.
	require.NoError(t, trs[0].SendTo([]byte("x"), trs[1].LocalAddr()))
	assert.Equal(t, []byte("x"), recv(t, trs[1]).Data)
}

// TestProbeCancelledEndsAtOnce: cancelling the context ends a probe that is
// waiting for an answer that never comes.
func TestProbeCancelledEndsAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	trs := loopbackCluster(t, 2, nil)
	defer closeAll(t, trs)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() {
		u, _ := trs[0].Probe(ctx, trs[1].LocalAddr(), time.Hour)
		done <- u
	}()
	cancel()
	select {
	case u := <-done:
		assert.False(t, u)
	case <-time.After(10 * time.Second):
		t.Fatal("probe did not end on cancel")
	}
}

// TestProbeLeavesFromTheBoundAddress: the probe's source is the transport's
// own address (the interface the heartbeats use), on another port.
func TestProbeLeavesFromTheBoundAddress(t *testing.T) {
	raw, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer raw.Close()
	trs := loopbackCluster(t, 1, func(_ int, c *UDPConfig) { c.Bind = "127.0.0.1" })
	go trs[0].Probe(context.Background(), raw.LocalAddr().(*net.UDPAddr).AddrPort(), 10*time.Millisecond)
	require.NoError(t, raw.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, from, err := raw.ReadFromUDPAddrPort(make([]byte, 8))
	require.NoError(t, err)
	assert.Zero(t, n, "a probe is an empty datagram")
	assert.Equal(t, trs[0].LocalAddr().Addr(), from.Addr())
	assert.NotEqual(t, trs[0].LocalAddr().Port(), from.Port())
}

func closeAll(t *testing.T, trs []*UDPTransport) {
	for _, tr := range trs {
		require.NoError(t, tr.Close())
	}
}
