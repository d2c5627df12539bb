package udp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// Prober is implemented by transports that can tell whether a process still
// listens at an address. The Elector uses it, when its Transport has it, to
// learn at once that the leader's process died while its host stayed up.
type Prober interface {
	// Probe sends one empty datagram to `to` and waits up to wait for the
	// host's answer. It reports true when the host said nothing listens
	// there (ICMP port unreachable); false when nothing came back (a live
	// process, a host that is gone, a firewall dropping ICMP, or an answer
	// held back by the sender's ICMP rate limit). err is for local
	// failures only (no socket); the caller treats them as "no answer".
	Probe(ctx context.Context, to netip.AddrPort, wait time.Duration) (unreachable bool, err error)
}

var _ Prober = (*UDPTransport)(nil)

// Probe sends an empty datagram to `to` from a fresh socket connected to it,
// bound to the transport's own address (so the probe leaves by the same
// interface as the heartbeats). On Linux only a connected UDP socket hears
// the ICMP error its datagram provokes: the next read fails with
// ECONNREFUSED. The empty datagram is the probe's whole protocol: a live
// node's transport counts it (TransportStats.ProbesIn) and drops it.
//
// The answering host rate-limits its ICMP errors (net.ipv4.icmp_ratelimit
// and icmp_ratemask, net.ipv6.icmp.ratelimit; a per-destination token
// bucket, by default 1 per second with a burst of 6, plus the global
// icmp_msgs_per_sec): a probe beyond that budget goes unanswered, and the
// follower falls back to the detection floor. Loopback is not limited.
func (t *UDPTransport) Probe(ctx context.Context, to netip.AddrPort, wait time.Duration) (bool, error) {
	local := net.UDPAddrFromAddrPort(netip.AddrPortFrom(t.local.Addr(), 0))
	conn, err := net.DialUDP(udpNetwork(t.local.Addr()), local, net.UDPAddrFromAddrPort(to))
	if err != nil {
		return false, fmt.Errorf("udp: probe %s: %w", to, err)
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(wait)); err != nil {
		return false, fmt.Errorf("udp: probe %s: %w", to, err)
	}
	// After the deadline above, so a cancellation cannot be overwritten.
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	defer stop()
	if _, err := conn.Write(nil); err != nil {
		return refused(err), nil
	}
	var buf [1]byte
	// Whatever arrives (nothing should: a node never answers a probe) is
	// not "unreachable".
	_, err = conn.Read(buf[:])
	return refused(err), nil
}

// refused reports whether err is the ICMP "port unreachable" of a
// connected UDP socket.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// udpNetwork is the network name for sockets on addr's family.
func udpNetwork(addr netip.Addr) string {
	if addr.Unmap().Is4() {
		return "udp4"
	}
	return "udp6"
}
