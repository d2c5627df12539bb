package udp

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"net/netip"
)

// Mode says how a UDPTransport reaches the other nodes.
type Mode string

// Transport modes.
const (
	// ModeAuto is broadcast, or unicast when peers are listed.
	ModeAuto Mode = ""
	// ModeBroadcast sends to the bound IPv4 subnet's directed broadcast
	// address. IPv4 only.
	ModeBroadcast Mode = "broadcast"
	// ModeMulticast sends to a multicast group (one per cluster unless
	// set) that every node joins on the bound interface, with a hop limit
	// of 1: for networks that filter broadcast (Wi-Fi access points, some
	// managed switches), and for IPv6, which has no broadcast.
	ModeMulticast Mode = "multicast"
	// ModeUnicast sends to each listed peer in turn.
	ModeUnicast Mode = "unicast"
)

// ParseMode parses a transport name: broadcast, multicast or unicast ("" is
// ModeAuto).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAuto, ModeBroadcast, ModeMulticast, ModeUnicast:
		return m, nil
	}
	return "", fmt.Errorf("udp: transport %q: want broadcast, multicast or unicast", s)
}

// Resolve turns ModeAuto into broadcast or unicast, given how many peers
// are listed, and checks that peers are listed exactly when the mode uses
// them.
func (m Mode) Resolve(peers int) (Mode, error) {
	switch {
	case m == ModeAuto && peers > 0:
		return ModeUnicast, nil
	case m == ModeAuto:
		return ModeBroadcast, nil
	case m == ModeUnicast && peers == 0:
		return "", fmt.Errorf("udp: transport unicast needs peers: list every node's address")
	case m != ModeUnicast && peers > 0:
		return "", fmt.Errorf("udp: peers are listed but transport is %s; peers are for transport unicast (drop one or the other)", m)
	}
	return m, nil
}

// DefaultGroup returns the multicast group of cluster when none is set: a
// group derived from the cluster name, so clusters sharing a LAN do not
// wake each other's nodes. IPv4: 239.255.x.y (the organization-local scope
// of RFC 2365). IPv6: ff02::4c4c:xxxx:xxxx (link-local scope; "LL" for
// lanleader).
func DefaultGroup(cluster string, ipv6 bool) netip.Addr {
	h := fnv.New32a()
	h.Write([]byte(cluster))
	sum := h.Sum32()
	if !ipv6 {
		return netip.AddrFrom4([4]byte{239, 255, byte(sum >> 8), byte(sum)})
	}
	var a [16]byte
	a[0], a[1] = 0xff, 0x02
	a[10], a[11] = 0x4c, 0x4c
	binary.BigEndian.PutUint32(a[12:], sum)
	return netip.AddrFrom16(a)
}

// ResolveGroup returns the multicast group to use: group if set (which must
// be a multicast address of bind's family), else DefaultGroup(cluster).
func ResolveGroup(group, cluster string, bind netip.Addr) (netip.Addr, error) {
	if group == "" {
		return DefaultGroup(cluster, !bind.Is4()), nil
	}
	g, err := netip.ParseAddr(group)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("udp: group %q: not an IP address", group)
	}
	g = g.Unmap()
	if !g.IsMulticast() {
		return netip.Addr{}, fmt.Errorf("udp: group %s is not a multicast address (224.0.0.0/4 or ff00::/8)", g)
	}
	if g.Is4() != bind.Is4() {
		return netip.Addr{}, fmt.Errorf("udp: group %s and bind %s are not of one IP family", g, bind)
	}
	return g.WithZone(""), nil
}
