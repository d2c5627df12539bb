package udp

import (
	"net/netip"
	"time"
)

// maxDatagram is the largest UDP payload over IPv4; reading into a buffer
// this big means an oversized packet arrives whole and the codec rejects it,
// instead of being silently truncated into something that might parse.
const maxDatagram = 65535

// Read error backoff: first retry after minReadBackoff, doubling to
// maxReadBackoff, reset by the next successful read.
const (
	minReadBackoff = 10 * time.Millisecond
	maxReadBackoff = 2 * time.Second
)

// datagramReader is the part of *net.UDPConn readLoop uses; tests substitute
// a reader that fails on demand.
type datagramReader interface {
	ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error)
}

// datagramWriter is the sending side of *net.UDPConn that SendTo uses.
type datagramWriter interface {
	WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error)
}

// readLoop reads conn until Close. Errors are counted, logged and retried
// with backoff, so a flapping interface does not end the election.
func (t *UDPTransport) readLoop(conn datagramReader) {
	defer t.wg.Done()
	buf := make([]byte, maxDatagram)
	backoff := time.Duration(0)
	received := func(b []byte, from netip.AddrPort) {
		backoff = 0
		t.deliver(b, netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), time.Now())
	}
	for {
		err := readEach(conn, buf, received)
		select {
		case <-t.done:
			return
		default:
		}
		t.stats.readErrors.Add(1)
		backoff = min(max(2*backoff, minReadBackoff), maxReadBackoff)
		t.readLog.Warn(t.log, "udp: read failed; retrying", "err", err, "retry_in", backoff)
		timer := time.NewTimer(backoff)
		select {
		case <-t.done:
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// batchReader is a datagramReader that can also receive in batches, handing
// each datagram to a function inside one long read (rawio_linux.go).
type batchReader interface {
	readEach(each func(b []byte, from netip.AddrPort)) error
}

// readEach calls each with every datagram conn receives until a receive
// fails, and returns that error. b is only valid during the call.
func readEach(conn datagramReader, buf []byte, each func(b []byte, from netip.AddrPort)) error {
	if br, ok := conn.(batchReader); ok {
		return br.readEach(each)
	}
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return err
		}
		each(buf[:n], from)
	}
}

// deliver filters one datagram and hands it over (HandOff) or queues a
// copy of it.
func (t *UDPTransport) deliver(b []byte, from netip.AddrPort, at time.Time) {
	t.stats.packetsIn.Add(1)
	t.stats.bytesIn.Add(uint64(len(b)))
	if from.Addr().WithZone("") == t.local.Addr().WithZone("") && from.Port() == t.local.Port() {
		if !t.EchoesSelf() {
			t.stats.droppedSelf.Add(1)
			return
		}
		// Our own broadcast, looped back by the host through the same
		// input path as everyone else's: the protocol's proof that this
		// node can receive (protocol.Config.SelfEcho).
		t.stats.selfEchoes.Add(1)
	}
	if len(b) == 0 {
		t.stats.probesIn.Add(1) // a peer checking we still listen (probe.go)
		return
	}
	if t.allowed != nil && !t.allowed[from.Addr().WithZone("")] {
		t.stats.droppedUnknownPeer.Add(1)
		t.log.Debug("udp: dropped packet from a source not in peers", "from", from.String(), "bytes", len(b))
		return
	}
	if h := t.handoff.Load(); h != nil {
		(*h)(Packet{Data: b, From: from, At: at})
		return
	}
	p := Packet{Data: append([]byte(nil), b...), From: from, At: at}
	select {
	case t.packets <- p:
	default:
		t.stats.droppedQueueFull.Add(1)
		t.log.Debug("udp: dropped packet, receive queue full", "from", from.String())
	}
}
