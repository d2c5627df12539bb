package udp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// UDPConfig configures a UDPTransport.
type UDPConfig struct {
	// Mode is broadcast, multicast or unicast; ModeAuto (empty) means
	// unicast when Peers are listed, else broadcast.
	Mode Mode
	// Bind is the IPv4 or IPv6 address to use, or a go-sockaddr template
	// that resolves to exactly one (see ResolveBind). Empty means
	// DefaultBind.
	Bind string
	// Port is the cluster's UDP port: nodes listen on it, Broadcast sends
	// to it, and peers listed without a port use it. 0 means DefaultPort.
	Port int
	// ListenPort is the local port to bind, when it differs from Port: 0
	// means Port; AnyPort lets the kernel choose.
	ListenPort int
	// Peers switches to unicast: "host:port", "[ipv6]:port" or "host"
	// (meaning Port) of every other node, of Bind's IP family; listing this node too is fine (it is skipped), so
	// every node can share one list. Broadcast then sends to each peer, and
	// packets from any IP address not listed are dropped (any source port
	// is accepted). Host names are resolved once, by NewUDPTransport. Empty
	// means subnet broadcast.
	Peers []string
	// Group is the multicast group (ModeMulticast), of Bind's IP family.
	// Empty means DefaultGroup(Cluster).
	Group string
	// Cluster names the cluster; it only picks the default Group.
	Cluster string
	// QueueLen is the capacity of the Packets() channel; packets arriving
	// while it is full are dropped and counted. 0 means 256.
	QueueLen int
	// Logger receives socket errors and drops; nil means slog.Default().
	Logger *slog.Logger
}

// defaultQueueLen absorbs a burst (every node of a large cluster claiming at
// once while a slow callback holds up the reader) without dropping; at one
// heartbeat per interval in steady state it is never close to full.
const defaultQueueLen = 256

// peerLookupTimeout bounds resolving the host names in Peers.
const peerLookupTimeout = 5 * time.Second

func (c *UDPConfig) withDefaults() (UDPConfig, error) {
	out := *c
	if out.Port == 0 {
		out.Port = DefaultPort
	}
	if out.Port < 1 || out.Port > 65535 {
		return out, fmt.Errorf("udp: port %d out of range 1-65535", c.Port)
	}
	switch {
	case out.ListenPort == 0:
		out.ListenPort = out.Port
	case out.ListenPort == AnyPort:
		out.ListenPort = 0
	case out.ListenPort < 1 || out.ListenPort > 65535:
		return out, fmt.Errorf("udp: listen port %d out of range 1-65535 (or AnyPort)", c.ListenPort)
	}
	if out.QueueLen <= 0 {
		out.QueueLen = defaultQueueLen
	}
	if out.Logger == nil {
		out.Logger = slog.Default()
	}
	return out, nil
}

// resolvePeers turns Peers into addresses of one family (IPv4 if v4, else
// IPv6), deduplicated, in order.
func resolvePeers(peers []string, defaultPort int, v4 bool) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	seen := make(map[netip.AddrPort]bool)
	for _, p := range peers {
		ap, err := resolvePeer(strings.TrimSpace(p), defaultPort, v4)
		if err != nil {
			return nil, err
		}
		if !seen[ap] {
			seen[ap] = true
			out = append(out, ap)
		}
	}
	return out, nil
}

func resolvePeer(p string, defaultPort int, v4 bool) (netip.AddrPort, error) {
	family, network := "IPv4", "ip4"
	if !v4 {
		family, network = "IPv6", "ip6"
	}
	host, portStr, err := net.SplitHostPort(p)
	if err != nil {
		// No port: the whole entry is the host ("[fd00::1]" or "fd00::1").
		host, portStr = strings.TrimSuffix(strings.TrimPrefix(p, "["), "]"), strconv.Itoa(defaultPort)
	}
	if host == "" {
		return netip.AddrPort{}, fmt.Errorf("udp: peer %q: empty host; want host:port", p)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return netip.AddrPort{}, fmt.Errorf("udp: peer %q: bad port %q; want 1-65535", p, portStr)
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), peerLookupTimeout)
		defer cancel()
		addrs, lerr := net.DefaultResolver.LookupNetIP(ctx, network, host)
		if lerr != nil {
			return netip.AddrPort{}, fmt.Errorf("udp: peer %q: %w", p, lerr)
		}
		if len(addrs) != 1 {
			return netip.AddrPort{}, fmt.Errorf("udp: peer %q: host %s has %d %s addresses (%v); list the one to use", p, host, len(addrs), family, addrs)
		}
		addr = addrs[0]
	}
	addr = addr.Unmap()
	if addr.Is4() != v4 {
		return netip.AddrPort{}, fmt.Errorf("udp: peer %q: %s is not %s, as the bind address is; list peers of one family", p, addr, family)
	}
	if addr.Is6() && addr.IsLinkLocalUnicast() && addr.Zone() == "" {
		return netip.AddrPort{}, fmt.Errorf("udp: peer %q: link-local %s needs its interface, e.g. [%s%%eth0]:%s", p, addr, addr, portStr)
	}
	if addr.IsUnspecified() || addr.IsMulticast() || addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return netip.AddrPort{}, fmt.Errorf("udp: peer %q: %s is not a node's address", p, addr)
	}
	return netip.AddrPortFrom(addr, uint16(port)), nil
}
