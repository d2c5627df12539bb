package memnet

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"

	"github.com/lanleader/lanleader/election/udp"
)

// Transport is one node's udp.Transport on a Network.
type Transport struct {
	net     *Network
	addr    netip.AddrPort
	packets chan udp.Packet
	closed  bool               // guarded by net.mu
	stats   udp.TransportStats // guarded by net.mu
}

var _ udp.Transport = (*Transport)(nil)

// Broadcast sends b to every other node on the network.
func (t *Transport) Broadcast(b []byte) error {
	n := t.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if t.closed {
		return fmt.Errorf("memnet: broadcast from %s: %w", t.addr, net.ErrClosed)
	}
	// Sorted, so that with WithSeed the same packets are lost every run.
	for _, to := range slices.SortedFunc(maps.Keys(n.nodes), netip.AddrPort.Compare) {
		if to != t.addr {
			t.stats.PacketsOut++
			t.stats.BytesOut += uint64(len(b))
			n.send(t.addr, to, b)
		}
	}
	return nil
}

// SendTo sends b to one address. As with UDP, an address nobody holds
// swallows the packet without an error; a packet to this node's own address
// is dropped, as the UDP transport drops its own packets.
func (t *Transport) SendTo(b []byte, to netip.AddrPort) error {
	n := t.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if t.closed {
		return fmt.Errorf("memnet: send from %s to %s: %w", t.addr, to, net.ErrClosed)
	}
	t.stats.PacketsOut++
	t.stats.BytesOut += uint64(len(b))
	if to == t.addr {
		t.stats.DroppedSelf++
		return nil
	}
	n.send(t.addr, to, b)
	return nil
}

// Packets returns the received packets; the channel is closed by Close.
func (t *Transport) Packets() <-chan udp.Packet { return t.packets }

// LocalAddr returns the address the node joined at.
func (t *Transport) LocalAddr() netip.AddrPort { return t.addr }

// Close leaves the network: packets in flight to this address are lost, and
// the address is free for a restarted node to Join. Close is idempotent.
func (t *Transport) Close() error {
	n := t.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	delete(n.nodes, t.addr)
	close(t.packets)
	return nil
}

// Stats returns this transport's counters (ReadErrors and WriteErrors stay
// zero; DroppedUnknownPeer does not apply).
func (t *Transport) Stats() udp.TransportStats {
	t.net.mu.Lock()
	defer t.net.mu.Unlock()
	return t.stats
}
