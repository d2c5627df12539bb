package memnet_test

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
)

func addr(i int) netip.AddrPort {
	return netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i))
}

// join adds nodes 1..n.
func join(net *memnet.Network, n int) []*memnet.Transport {
	var ts []*memnet.Transport
	for i := 1; i <= n; i++ {
		ts = append(ts, net.Join(addr(i)))
	}
	return ts
}

// drain returns the packets queued at t, without waiting.
func drain(t udp.Transport) []string {
	var out []string
	for {
		select {
		case p := <-t.Packets():
			out = append(out, fmt.Sprintf("%s:%s", p.From.Addr(), p.Data))
		default:
			return out
		}
	}
}

func TestBroadcastAndSendTo(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		ts := join(n, 3)
		require.NoError(t, ts[0].Broadcast([]byte("hb")))
		require.NoError(t, ts[1].SendTo([]byte("direct"), addr(3)))
		require.NoError(t, ts[1].SendTo([]byte("self"), addr(2)))
		require.NoError(t, ts[1].SendTo([]byte("void"), addr(9)))

		assert.Empty(t, drain(ts[0]), "a node does not hear its own broadcast")
		assert.Equal(t, []string{"198.18.0.1:hb"}, drain(ts[1]))
		assert.Equal(t, []string{"198.18.0.1:hb", "198.18.0.2:direct"}, drain(ts[2]))
		assert.Equal(t, memnet.Stats{Delivered: 3, NoRoute: 1}, n.Stats())
		assert.Equal(t, uint64(1), ts[1].Stats().DroppedSelf)
		assert.Equal(t, uint64(3), ts[1].Stats().PacketsOut)
		assert.Equal(t, uint64(2), ts[2].Stats().PacketsIn)
	})
}

func TestPacketDataIsCopied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		ts := join(n, 2)
		b := []byte("abc")
		require.NoError(t, ts[0].Broadcast(b))
		b[0] = 'X'
		assert.Equal(t, []string{"198.18.0.1:abc"}, drain(ts[1]))
	})
}

func TestPartitionBlockHeal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		ts := join(n, 3)
		n.Partition([]netip.AddrPort{addr(1)}) // 1 alone; 2 and 3 together
		for _, tr := range ts {
			require.NoError(t, tr.Broadcast([]byte("p")))
		}
		assert.Empty(t, drain(ts[0]))
		assert.Equal(t, []string{"198.18.0.3:p"}, drain(ts[1]))
		assert.Equal(t, []string{"198.18.0.2:p"}, drain(ts[2]))
		assert.Equal(t, uint64(4), n.Stats().Blocked)

		n.Heal()
		n.Block(addr(1), addr(2)) // one way: 1 cannot reach 2
		require.NoError(t, ts[0].SendTo([]byte("x"), addr(2)))
		require.NoError(t, ts[1].SendTo([]byte("y"), addr(1)))
		assert.Empty(t, drain(ts[1]))
		assert.Equal(t, []string{"198.18.0.2:y"}, drain(ts[0]))

		n.Unblock(addr(1), addr(2))
		require.NoError(t, ts[0].SendTo([]byte("z"), addr(2)))
		assert.Equal(t, []string{"198.18.0.1:z"}, drain(ts[1]))
	})
}

func TestLossIsSeededAndReplays(t *testing.T) {
	run := func() (delivered []string) {
		synctest.Test(t, func(t *testing.T) {
			n := memnet.New(memnet.WithSeed(7), memnet.WithQueueLen(2000))
			ts := join(n, 3)
			n.SetLoss(0.3)
			for i := range 300 {
				require.NoError(t, ts[0].Broadcast([]byte{byte(i)}))
			}
			s := n.Stats()
			assert.Equal(t, uint64(600), s.Delivered+s.Lost)
			assert.InDelta(t, 180, s.Lost, 60, "about 30%% lost")
			delivered = append(drain(ts[1]), drain(ts[2])...)
		})
		return delivered
	}
	assert.Equal(t, run(), run(), "the same seed loses the same packets")
}

func TestDelayUsesTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		ts := join(n, 2)
		n.SetDelay(50 * time.Millisecond)
		start := time.Now()
		require.NoError(t, ts[0].SendTo([]byte("late"), addr(2)))
		synctest.Wait()
		assert.Empty(t, drain(ts[1]), "not before the delay")
		p := <-ts[1].Packets()
		assert.Equal(t, "late", string(p.Data))
		assert.Equal(t, 50*time.Millisecond, p.At.Sub(start), "At is the (fake) delivery time")
	})
}

func TestDelayedPacketToClosedNodeIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		ts := join(n, 2)
		n.SetDelay(time.Second)
		require.NoError(t, ts[0].SendTo([]byte("x"), addr(2)))
		require.NoError(t, ts[1].Close())
		time.Sleep(2 * time.Second) // fake time: the timer fires
		assert.Equal(t, uint64(1), n.Stats().NoRoute)
	})
}

func TestQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New(memnet.WithQueueLen(1))
		ts := join(n, 2)
		for range 3 {
			require.NoError(t, ts[0].SendTo([]byte("q"), addr(2)))
		}
		assert.Equal(t, memnet.Stats{Delivered: 1, QueueFull: 2}, n.Stats())
		assert.Equal(t, uint64(2), ts[1].Stats().DroppedQueueFull)
	})
}

func TestCloseAndRejoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		ts := join(n, 2)
		require.NoError(t, ts[1].Close())
		require.NoError(t, ts[1].Close(), "Close is idempotent")
		_, ok := <-ts[1].Packets()
		assert.False(t, ok, "Packets is closed")
		assert.ErrorIs(t, ts[1].SendTo([]byte("x"), addr(1)), net.ErrClosed)
		assert.ErrorIs(t, ts[1].Broadcast([]byte("x")), net.ErrClosed)

		again := n.Join(addr(2))
		require.NoError(t, ts[0].Broadcast([]byte("back")))
		assert.Equal(t, []string{"198.18.0.1:back"}, drain(again))
		assert.Panics(t, func() { n.Join(addr(2)) }, "joining an address in use is a test bug")
	})
}
