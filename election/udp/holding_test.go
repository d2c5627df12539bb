package udp_test

import (
	"context"
	"fmt"
	"log/slog"
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
)

// A follower that holds runs (SetHolding) reaches its leader's OnPayload,
// marked holding, on every heartbeat, its payload unchanged; its release
// arrives at once, unmarked; after that an unchanged payload is not passed
// up again.
func TestHoldingFollowerRenewsOnEveryHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.WithSeed(1))
		ctx, cancel := context.WithCancel(t.Context())
		var mu sync.Mutex
		heard := map[string][]protocol.PeerPayload{}
		els := make([]*udp.Elector, 2)
		done := make(chan struct{}, len(els))
		for i := range els {
			pc := protocol.DefaultLANConfig()
			pc.NodeID, pc.Cluster = fmt.Sprintf("n%d", i+1), "test"
			pc.Rand = rand.New(rand.NewPCG(uint64(i), 7))
			pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(i+1))
			id := pc.NodeID
			e, err := udp.New(udp.Config{
				Protocol: pc, Transport: net.Join(netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i+1))),
				Clock: udp.GoClock{}, Logger: slog.New(slog.DiscardHandler),
				Payload: func() []byte { return []byte(id + "'s ledger") },
				OnPayload: func(h protocol.PeerPayload) error {
					mu.Lock()
					heard[id] = append(heard[id], h)
					mu.Unlock()
					return nil
				},
			})
			require.NoError(t, err)
			els[i] = e
			go func() { _ = e.Run(ctx, election.Callbacks{}); done <- struct{}{} }()
		}
		time.Sleep(time.Minute) // past every gathering window
		l, f := els[0], els[1]
		if !l.Status().IsLeader() {
			l, f = f, l
		}
		require.True(t, l.Status().IsLeader())
		lid, fid := l.Status().Node, f.Status().Node
		fromF := func() []protocol.PeerPayload {
			mu.Lock()
			defer mu.Unlock()
			var out []protocol.PeerPayload
			for _, h := range heard[lid] {
				if h.From == fid {
					out = append(out, h)
				}
			}
			heard[lid] = nil
			return out
		}
		fromF()
		f.SetHolding(true)
		interval := protocol.DefaultLANConfig().Interval
		time.Sleep(10 * interval)
		got := fromF()
		require.GreaterOrEqual(t, len(got), 10, "at once and on every heartbeat")
		for _, h := range got {
			assert.True(t, h.Holding)
			assert.Equal(t, protocol.Ledger, h.Type)
			assert.Equal(t, fid+"'s ledger", string(h.Payload))
		}
		f.SetHolding(false)
		time.Sleep(time.Millisecond)
		got = fromF()
		require.Len(t, got, 1, "the release, at once")
		assert.False(t, got[0].Holding)
		time.Sleep(10 * interval)
		assert.Empty(t, fromF(), "nothing new to say")
		cancel()
		for range els {
			<-done
		}
	})
}
