package udp

import (
	"context"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// The benchmarks below measure the run loop's work per heartbeat, without
// sockets, timers or goroutine hand-offs: a leader's send path (Tick, encode,
// send, status update) and a follower's receive path (decode, Step, status
// update). An idle node does one of these per interval, so their
// allocations are the garbage an idle node makes.

// nullTransport is a Transport that discards what it is given.
type nullTransport struct{ packets chan Packet }

func (t nullTransport) Broadcast([]byte) error              { return nil }
func (t nullTransport) SendTo([]byte, netip.AddrPort) error { return nil }
func (t nullTransport) Packets() <-chan Packet              { return t.packets }
func (t nullTransport) LocalAddr() netip.AddrPort           { return netip.MustParseAddrPort("198.18.0.1:7483") }
func (t nullTransport) Close() error                        { return nil }

var bench0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func benchElector(b *testing.B, id string, prio uint8) (*Elector, *election.Notifier) {
	b.Helper()
	pc := protocol.DefaultLANConfig()
	pc.Cluster, pc.NodeID, pc.Priority = "bench", id, prio
	pc.Interval = 50 * time.Millisecond
	pc.Rand = rand.New(rand.NewPCG(1, 2))
	pc.Incarnation = protocol.NewIncarnation(bench0.UnixMilli(), uint16(prio))
	e, err := New(Config{Protocol: pc, Transport: nullTransport{}, Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	e.node, err = protocol.NewNode(pc, bench0)
	if err != nil {
		b.Fatal(err)
	}
	return e, election.NewNotifier(context.Background(), election.Callbacks{}, e.node.Status())
}

// lead ticks e's node (alone on a silent network) until it leads; it
// returns the time reached.
func lead(b *testing.B, e *Elector, n *election.Notifier) time.Time {
	b.Helper()
	now := bench0
	for range 100 {
		now = e.node.NextTick()
		e.node.Tick(now)
		e.flush()
		n.Update(e.node.Status())
		if e.node.Status().Role == election.Leader {
			return now
		}
	}
	b.Fatal("no leadership")
	return now
}

func BenchmarkHeartbeatSend(b *testing.B) {
	e, n := benchElector(b, "leader", 200)
	now := lead(b, e, n)
	b.ReportAllocs()
	for b.Loop() {
		now = e.node.NextTick()
		e.node.Tick(now)
		e.flush()
		n.Update(e.node.Status())
	}
}

func BenchmarkHeartbeatReceive(b *testing.B) {
	l, ln := benchElector(b, "leader", 200)
	now := lead(b, l, ln)
	f, fn := benchElector(b, "follower", 100)
	from := netip.MustParseAddrPort("198.18.0.2:7483")
	// Heartbeats are encoded up front: each has a fresh Seq and Beat, or
	// the follower would drop it as a replay.
	const ring = 1 << 16
	pkts := make([]Packet, 0, ring)
	for range ring {
		now = l.node.NextTick()
		l.node.Tick(now)
		for _, env := range l.node.Ready() {
			data, err := wire.Encode(env.Msg, nil)
			if err != nil {
				b.Fatal(err)
			}
			pkts = append(pkts, Packet{Data: data, From: from, At: now})
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(pkts) {
			b.StopTimer()
			f, fn = benchElector(b, "follower", 100) // a fresh follower for the replayed stream
			i = 0
			b.StartTimer()
		}
		f.receive(pkts[i])
		f.flush()
		fn.Update(f.node.Status())
		i++
	}
}
