//go:build unix

package udp

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
)

// setBroadcast sets SO_BROADCAST, without which the kernel refuses to send
// to a broadcast address (EACCES). Go's net package happens to set it on UDP
// sockets already; setting it here does not depend on that.
func setBroadcast(network, address string, c syscall.RawConn) error {
	return setSockopt(address, c, syscall.SO_BROADCAST, "SO_BROADCAST")
}

// setReuseAddr sets SO_REUSEADDR and SO_BROADCAST on the socket bound to the
// broadcast address, so several nodes on one host (one per address, in
// tests or network namespaces) can all receive the subnet's broadcasts.
func setReuseAddr(network, address string, c syscall.RawConn) error {
	if err := setBroadcast(network, address, c); err != nil {
		return err
	}
	return setSockopt(address, c, syscall.SO_REUSEADDR, "SO_REUSEADDR")
}

func setSockopt(address string, c syscall.RawConn, opt int, name string) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, 1)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("set %s on %s: %w", name, address, err)
	}
	return nil
}

// listenGroupSocket opens a UDP socket bound to group:port itself, with
// SO_REUSEADDR (several nodes of one host may listen) and joined to group
// on the interface holding local (IPv4) or ifindex (IPv6). Go's net package
// would bind a multicast address as the wildcard address, which collides
// with the node's own unicast socket on the same port and would also hear
// unicast datagrams to any local address; bound to the group, the socket
// hears the group only.
func listenGroupSocket(group netip.AddrPort, local netip.Addr, ifindex int) (*net.UDPConn, error) {
	g := group.Addr()
	family, sa := syscall.AF_INET6, syscall.Sockaddr(&syscall.SockaddrInet6{Port: int(group.Port()), Addr: g.As16(), ZoneId: uint32(ifindex)})
	if g.Is4() {
		family, sa = syscall.AF_INET, &syscall.SockaddrInet4{Port: int(group.Port()), Addr: g.As4()}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_DGRAM, syscall.IPPROTO_UDP)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "multicast "+group.String())
	defer f.Close() // FilePacketConn dups it
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return nil, fmt.Errorf("set SO_REUSEADDR: %w", err)
	}
	if g.Is4() {
		err = syscall.SetsockoptIPMreq(fd, syscall.IPPROTO_IP, syscall.IP_ADD_MEMBERSHIP,
			&syscall.IPMreq{Multiaddr: g.As4(), Interface: local.As4()})
	} else {
		err = syscall.SetsockoptIPv6Mreq(fd, syscall.IPPROTO_IPV6, syscall.IPV6_JOIN_GROUP,
			&syscall.IPv6Mreq{Multiaddr: g.As16(), Interface: uint32(ifindex)})
	}
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	if err := syscall.Bind(fd, sa); err != nil {
		return nil, fmt.Errorf("bind: %w", err)
	}
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}
