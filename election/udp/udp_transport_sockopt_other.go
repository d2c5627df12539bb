//go:build !unix

package udp

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
)

// setBroadcast relies on Go's net package, which sets SO_BROADCAST on UDP
// sockets; lanleader's broadcast mode is only tested on Linux.
func setBroadcast(network, address string, c syscall.RawConn) error { return nil }

// setReuseAddr is not needed where broadcast mode is not supported.
func setReuseAddr(network, address string, c syscall.RawConn) error { return nil }

// listenGroupSocket: multicast mode is supported on unix systems only.
func listenGroupSocket(group netip.AddrPort, local netip.Addr, ifindex int) (*net.UDPConn, error) {
	return nil, errors.New("transport multicast is supported on Linux and other unix systems only")
}
