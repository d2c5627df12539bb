//go:build !linux

package udp

import (
	"net"
)

// readerOf returns the datagramReader readLoop uses for conn: the net
// package's (rawio_linux.go has the raw one).
func readerOf(conn *net.UDPConn) datagramReader { return conn }

// writerOf returns the datagramWriter SendTo uses for conn.
func writerOf(conn *net.UDPConn) datagramWriter { return conn }
