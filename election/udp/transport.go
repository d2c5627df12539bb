package udp

import (
	"net/netip"
	"time"
)

// DefaultPort is the UDP port lanleader nodes listen on and broadcast to when
// no port is configured. It is unassigned by IANA; pick another (the same on
// every node of a cluster) if something on your LAN already uses it.
const DefaultPort = 7483

// AnyPort as UDPConfig.ListenPort binds a port the kernel chooses, for
// one-shot clients (`lanleader who`) and tests that run several nodes on one
// address.
const AnyPort = -1

// Packet is one datagram received by a Transport.
type Packet struct {
	// Data is the datagram's payload. It belongs to the receiver.
	Data []byte
	// From is the sender's address and port.
	From netip.AddrPort
	// At is when the transport read the datagram, with a monotonic
	// reading, so it can be used for timeouts.
	At time.Time
}

// Transport carries packets between the nodes of a cluster. Implementations
// are safe for concurrent use. Packets from the node itself are not
// delivered to it.
type Transport interface {
	// Broadcast sends b to every peer: the subnet's broadcast address, or
	// each configured peer in unicast mode.
	Broadcast(b []byte) error
	// SendTo sends b to one address.
	SendTo(b []byte, to netip.AddrPort) error
	// Packets returns the channel of received packets. It is closed after
	// Close, once no more packets can arrive. A transport that also
	// implements HandOff (UDPTransport) queues here only the packets that
	// arrived before the Elector's Run called HandOff.
	Packets() <-chan Packet
	// LocalAddr returns the address and port packets are sent from.
	LocalAddr() netip.AddrPort
	// Close stops receiving and releases the socket. Sends after Close
	// fail; a second Close does nothing.
	Close() error
}

// TransportStats are a transport's counters since it was created. All are
// monotonically increasing.
type TransportStats struct {
	// PacketsIn and BytesIn count every datagram received, including the
	// ones then dropped (the Dropped* counters and ProbesIn below); the
	// rest went to Packets() or to the HandOff function. A packet is
	// counted before it is queued or handed off, so whoever receives it
	// already sees it in Stats.
	PacketsIn, BytesIn uint64
	// PacketsOut and BytesOut count datagrams sent successfully (a
	// unicast-mode Broadcast counts one per peer).
	PacketsOut, BytesOut uint64
	// ReadErrors and WriteErrors count failed socket reads and writes.
	ReadErrors, WriteErrors uint64
	// DroppedSelf counts the node's own packets heard back and dropped
	// (a transport that does not echo itself).
	DroppedSelf uint64
	// SelfEchoes counts the node's own broadcasts heard back and passed
	// up (a broadcast transport on Linux, see UDPTransport.EchoesSelf).
	SelfEchoes uint64
	// DroppedUnknownPeer counts packets from IP addresses not in the peer
	// list (unicast mode only).
	DroppedUnknownPeer uint64
	// DroppedQueueFull counts packets dropped because the reader of
	// Packets() fell behind (handed-off packets are never queued).
	DroppedQueueFull uint64
	// ProbesIn counts empty datagrams: other nodes' probes of whether this
	// process still listens (see Prober). They are not delivered.
	ProbesIn uint64
}
