//go:build !unix

package udp

import "syscall"

// setBroadcast relies on Go's net package, which sets SO_BROADCAST on UDP
// sockets; lanleader's broadcast mode is only tested on Linux.
func setBroadcast(network, address string, c syscall.RawConn) error { return nil }

// setReuseAddr is not needed where broadcast mode is not supported.
func setReuseAddr(network, address string, c syscall.RawConn) error { return nil }
