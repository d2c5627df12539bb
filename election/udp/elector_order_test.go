package udp_test

import (
	"context"
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/udptest"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// watchTransport calls onSend with every message the Elector broadcasts,
// before it leaves.
type watchTransport struct {
	udp.Transport
	onSend func(protocol.Message)
}

func (w watchTransport) Broadcast(b []byte) error {
	if m, err := wire.Decode(b, nil); err == nil {
		w.onSend(m)
	}
	return w.Transport.Broadcast(b)
}

// soloLeader runs a one-node cluster until it leads.
func soloLeader(t *testing.T, clock udp.Clock, onSend func(protocol.Message), cb election.Callbacks) (*udp.Elector, context.CancelFunc, chan error) {
	t.Helper()
	net := memnet.New(memnet.WithSeed(1))
	pc := protocol.DefaultLANConfig()
	pc.NodeID, pc.Cluster = "solo", "test"
	pc.Rand = rand.New(rand.NewPCG(1, 7))
	pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), 1)
	var tr udp.Transport = net.Join(netip.MustParseAddrPort("198.18.0.1:7483"))
	if onSend != nil {
		tr = watchTransport{Transport: tr, onSend: onSend}
	}
	e, err := udp.New(udp.Config{Protocol: pc, Transport: tr, Clock: clock})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, cb) }()
	advance(2 * time.Second)
	require.True(t, e.Status().IsLeader())
	return e, cancel, done
}

// TestResignLeavesAfterLeadershipEnded: the RESIGN that lets a successor
// take over leaves only after this node's leadership has ended — its
// context cancelled, OnStoppedLeading returned, CanActAsLeader false — so
// two nodes never lead at once across a graceful handover.
func TestResignLeavesAfterLeadershipEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu      sync.Mutex
			stopped bool
			leadCtx context.Context
			checked bool
			e       *udp.Elector
		)
		cb := election.Callbacks{
			OnStartedLeading: func(ctx context.Context, _ uint64) { mu.Lock(); leadCtx = ctx; mu.Unlock() },
			OnStoppedLeading: func() { mu.Lock(); stopped = true; mu.Unlock() },
		}
		onSend := func(m protocol.Message) {
			if m.Type != protocol.Resign {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			checked = true
			assert.True(t, stopped, "OnStoppedLeading returned before RESIGN left")
			assert.Error(t, leadCtx.Err(), "leadership context cancelled before RESIGN left")
			assert.False(t, e.CanActAsLeader(), "CanActAsLeader false before RESIGN left")
		}
		var cancel context.CancelFunc
		var done chan error
		e, cancel, done = soloLeader(t, udp.GoClock{}, onSend, cb)
		cancel()
		require.NoError(t, <-done)
		mu.Lock()
		defer mu.Unlock()
		assert.True(t, checked, "a leader that stops sends RESIGN")
	})
}

// TestSuspendedLeaderMayNotAct: the Elector takes protocol time from its
// Clock everywhere. After a host suspend (the clock jumps, fake monotonic
// time does not move) the leader may not act: having slept longer than
// misses × interval, it steps down and leads again only through a new
// claim (which, alone, it wins).
func TestSuspendedLeaderMayNotAct(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &udptest.JumpClock{}
		e, cancel, done := soloLeader(t, clock, nil, election.Callbacks{})
		require.True(t, e.CanActAsLeader())
		clock.Jump(10 * time.Second)
		assert.False(t, e.CanActAsLeader(), "a leader that slept 10 s acts as if it had not")
		advance(time.Second)
		assert.Positive(t, e.Stats().Pauses, "the suspend is handled as a pause")
		assert.True(t, e.CanActAsLeader(), "alone, it leads again after a new claim")
		assert.Positive(t, e.Stats().SteppedDown, "it stepped down as it woke")
		cancel()
		require.NoError(t, <-done)
	})
}
