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
	"github.com/lanleader/lanleader/election/udp/udptest"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// stallTransport queues the ACKs it receives while held, as a stalled
// process's socket buffer does, and hands them over on release, before
// anything else the process does on waking.
type stallTransport struct {
	udp.Transport
	packets chan udp.Packet

	mu     sync.Mutex
	held   bool
	queued []udp.Packet
}

func newStallTransport(t udp.Transport) *stallTransport {
	s := &stallTransport{Transport: t, packets: make(chan udp.Packet, 64)}
	go func() {
		defer close(s.packets)
		for p := range t.Packets() {
			s.mu.Lock()
			if m, err := wire.Decode(p.Data, nil); s.held && err == nil && m.Type == protocol.Ack {
				s.queued = append(s.queued, p)
				s.mu.Unlock()
				continue
			}
			s.mu.Unlock()
			s.packets <- p
		}
	}()
	return s
}

func (s *stallTransport) Packets() <-chan udp.Packet { return s.packets }

func (s *stallTransport) hold() { s.mu.Lock(); s.held = true; s.mu.Unlock() }

// release hands the queued ACKs over and stops holding; it returns how
// many there were.
func (s *stallTransport) release() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.queued {
		s.packets <- p
	}
	n := len(s.queued)
	s.queued, s.held = nil, false
	return n
}

// TestStalledLeaderCommitsNothingOnAQueuedAck is issue 22's hole 1 in the
// adapter: a quorum leader's job asks Commit, the heartbeat carrying the
// run leaves and the followers ACK it; the leader stalls (its clock runs
// on past the lease and the Commit's deadline) before it reads the ACKs.
// Woken, it handles the queued ACKs before its timer's Tick. Commit must
// fail: a successor may have been elected and have rerun the instant.
func TestStalledLeaderCommitsNothingOnAQueuedAck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.WithSeed(1))
		net.SetDelay(time.Millisecond)
		els := make([]*udp.Elector, 3)
		trs := make([]*stallTransport, 3)
		clocks := make([]*udptest.JumpClock, 3)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{}, 3)
		var version sync.Map
		for i := range els {
			pc := protocol.DefaultLANConfig()
			pc.NodeID, pc.Cluster, pc.ClusterSize = fmt.Sprintf("n%d", i+1), "test", 3
			pc.Rand = rand.New(rand.NewPCG(uint64(i), 7))
			pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(i+1))
			trs[i] = newStallTransport(net.Join(netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i+1))))
			clocks[i] = &udptest.JumpClock{}
			payload := func() []byte { v, _ := version.Load(i); return fmt.Appendf(nil, "ledger v%v", v) }
			e, err := udp.New(udp.Config{Protocol: pc, Transport: trs[i], Clock: clocks[i], Payload: payload,
				Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			els[i] = e
			go func() { _ = e.Run(ctx, election.Callbacks{}); done <- struct{}{} }()
		}
		advance(3 * time.Second)
		l := -1
		for i, e := range els {
			if e.Status().Role == election.Leader {
				l = i
			}
		}
		require.NotEqual(t, -1, l)
		require.True(t, els[l].CanActAsLeader())

		trs[l].hold()
		version.Store(l, 1) // the run's ledger entry
		committed := make(chan error, 1)
		go func() { committed <- els[l].Commit(ctx) }()
		advance(10 * time.Millisecond) // the heartbeat leaves; the ACKs come back and wait
		select {
		case err := <-committed:
			t.Fatalf("Commit returned before any ACK was read: %v", err)
		default:
		}
		promise := protocol.DefaultLANConfig().Timings().Promise
		clocks[l].Jump(promise + time.Second) // the stall: a successor was elected and gathered meanwhile
		require.Positive(t, trs[l].release(), "the followers' ACKs of the run's heartbeat were queued")
		synctest.Wait()
		select {
		case err := <-committed:
			assert.ErrorIs(t, err, udp.ErrNotCommitted, "the stalled leader's run passes the gate on a lease that ended")
		default:
			t.Fatal("Commit still waits after the queued ACKs were handled")
		}
		assert.False(t, els[l].CanActAsLeader())
		cancel()
		for range els {
			<-done
		}
	})
}
