//go:build unix

package udp

import (
	"fmt"
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
