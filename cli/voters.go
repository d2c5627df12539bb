package cli

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// The voters a peers list names: this node and every other node listed.
// Every node may share one list with itself in it (the transport skips
// its own address), so an entry that is this node is not counted twice.

// peerVoters counts the voters peers names before anything is resolved
// (check-config does not touch the network): this node, and each distinct
// entry that is not this node — an entry is this node when its port is
// port and its host is one of this host's addresses, its host name (or
// that name's first label) or nodeID. run counts what the entries resolve
// to (resolvedVoters).
func peerVoters(peers []string, port int, nodeID string) int {
	if len(peers) == 0 {
		return 0
	}
	names := selfNames(nodeID)
	seen := map[string]bool{}
	n := 1
	for _, p := range peers {
		host, pport := splitPeer(p, port)
		key := strings.ToLower(host) + ":" + strconv.Itoa(pport)
		if seen[key] {
			continue
		}
		seen[key] = true
		if pport == port && isSelf(host, names) {
			continue
		}
		n++
	}
	return n
}

// resolvedVoters counts the voters of a unicast transport whose resolved
// peers, its own address left out, are others.
func resolvedVoters(others []netip.AddrPort) int {
	seen := map[netip.AddrPort]bool{}
	for _, a := range others {
		seen[a] = true
	}
	return len(seen) + 1
}

// splitPeer is a peers entry's host and port (port when it names none).
func splitPeer(p string, port int) (string, int) {
	host, ps, err := net.SplitHostPort(p)
	if err != nil {
		return strings.TrimSuffix(strings.TrimPrefix(p, "["), "]"), port
	}
	n, err := strconv.Atoi(ps)
	if err != nil {
		return host, port
	}
	return host, n
}

// selfNames are the names and addresses an entry for this node may use.
func selfNames(nodeID string) map[string]bool {
	names := map[string]bool{strings.ToLower(nodeID): true}
	if h, err := os.Hostname(); err == nil {
		h = strings.ToLower(h)
		names[h] = true
		names[strings.SplitN(h, ".", 2)[0]] = true
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				names[p.Addr().Unmap().String()] = true
			}
		}
	}
	return names
}

// isSelf reports whether host is one of names: as written, by its first
// label, or as the address it spells.
func isSelf(host string, names map[string]bool) bool {
	host = strings.ToLower(host)
	if a, err := netip.ParseAddr(host); err == nil {
		return names[a.WithZone("").Unmap().String()]
	}
	return names[host] || names[strings.SplitN(host, ".", 2)[0]]
}
