package udp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Commit in quorum mode returns once a majority acked the payload, about a
// round trip; a follower cannot commit; a leader cut off from every peer
// gets ErrNotCommitted instead of starting anything; followers hear the
// committed payload before Commit returns.
func TestCommitQuorum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.WithSeed(1))
		net.SetDelay(time.Millisecond)
		var version atomic.Int64
		payload := func() []byte { return fmt.Appendf(nil, "ledger v%d", version.Load()) }
		els := make([]*udp.Elector, 3)
		addrs := make([]netip.AddrPort, 3)
		heard := make([]atomic.Value, 3)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{}, 3)
		for i := range els {
			addrs[i] = netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i+1))
			pc := protocol.DefaultLANConfig()
			pc.NodeID, pc.Cluster, pc.ClusterSize = fmt.Sprintf("n%d", i+1), "test", 3
			pc.Rand = rand.New(rand.NewPCG(uint64(i), 7))
			pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(i+1))
			e, err := udp.New(udp.Config{
				Protocol: pc, Transport: net.Join(addrs[i]), Payload: payload, Logger: slog.New(slog.DiscardHandler),
				OnPayload: func(h protocol.PeerPayload) error { heard[i].Store(string(h.Payload)); return nil },
			})
			require.NoError(t, err)
			els[i] = e
			go func() { _ = e.Run(ctx, election.Callbacks{}); done <- struct{}{} }()
		}
		time.Sleep(3 * time.Second)
		leader := -1
		for i, e := range els {
			if e.Status().Role == election.Leader {
				leader = i
			}
		}
		require.NotEqual(t, -1, leader)
		follower := (leader + 1) % 3
		assert.ErrorIs(t, els[follower].Commit(ctx), udp.ErrNotCommitted, "a follower cannot commit")

		version.Store(1)
		start := time.Now()
		require.NoError(t, els[leader].Commit(ctx))
		assert.Less(t, time.Since(start), 10*time.Millisecond, "about one round trip")
		n := 0
		for i := range heard {
			if v, _ := heard[i].Load().(string); i != leader && v == "ledger v1" {
				n++
			}
		}
		assert.GreaterOrEqual(t, n, 1, "a majority (leader + 1) holds it when Commit returns")

		net.Partition([]netip.AddrPort{addrs[leader]})
		version.Store(2)
		err := els[leader].Commit(ctx)
		assert.True(t, errors.Is(err, udp.ErrNotCommitted), "cut off: %v", err)

		cctx, ccancel := context.WithCancel(ctx)
		ccancel()
		assert.ErrorIs(t, els[leader].Commit(cctx), context.Canceled)
		cancel()
		for range els {
			<-done
		}
		assert.ErrorIs(t, els[leader].Commit(context.Background()), udp.ErrNotCommitted, "after Run returned")
	})
}

// Without quorum, Commit returns once the heartbeat carrying the payload
// has been sent.
func TestCommitNoQuorum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.WithSeed(1))
		pc := protocol.DefaultLANConfig()
		pc.NodeID, pc.Cluster = "a", "test"
		pc.Rand = rand.New(rand.NewPCG(1, 7))
		pc.Incarnation = 1
		e, err := udp.New(udp.Config{Protocol: pc, Transport: net.Join(netip.MustParseAddrPort("198.18.0.1:7483")),
			Payload: func() []byte { return []byte("x") }, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { _ = e.Run(ctx, election.Callbacks{}); close(done) }()
		time.Sleep(2 * time.Second)
		require.Equal(t, election.Leader, e.Status().Role)
		require.NoError(t, e.Commit(ctx))
		cancel()
		<-done
	})
}

// OnDurable gets every new round before the claim of that round is sent,
// and Resume makes a restarted node claim above it.
func TestDurableStateIsSavedAndResumed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.WithSeed(1))
		start := func(inc uint64, resume protocol.Durable, saved *[]protocol.Durable) (*udp.Elector, context.CancelFunc, chan struct{}) {
			pc := protocol.DefaultLANConfig()
			pc.NodeID, pc.Cluster, pc.Resume = "a", "test", resume
			pc.Rand = rand.New(rand.NewPCG(inc, 7))
			pc.Incarnation = inc
			e, err := udp.New(udp.Config{Protocol: pc, Transport: net.Join(netip.MustParseAddrPort("198.18.0.1:7483")),
				Logger:    slog.New(slog.DiscardHandler),
				OnDurable: func(d protocol.Durable) error { *saved = append(*saved, d); return nil }})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { _ = e.Run(ctx, election.Callbacks{}); close(done) }()
			return e, cancel, done
		}
		var saved []protocol.Durable
		e, cancel, done := start(1, protocol.Durable{}, &saved)
		time.Sleep(2 * time.Second)
		require.Equal(t, election.Leader, e.Status().Role)
		term := e.Status().Leader.Term
		require.NotEmpty(t, saved)
		last := saved[len(saved)-1]
		assert.Equal(t, protocol.TermRound(term), last.Round, "the leadership's round is saved")
		cancel()
		<-done

		var again []protocol.Durable
		e, cancel, done = start(2, last, &again)
		time.Sleep(2 * time.Second)
		require.Equal(t, election.Leader, e.Status().Role)
		assert.Greater(t, protocol.TermRound(e.Status().Leader.Term), last.Round, "claims above the saved round")
		cancel()
		<-done
	})
}
