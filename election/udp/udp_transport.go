package udp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
)

// UDPTransport is the Transport over real UDP sockets, in one of two modes:
//
//   - broadcast (no peers): Broadcast sends to the bound subnet's directed
//     broadcast address. A second socket bound to that broadcast address
//     receives broadcasts, since on Linux a socket bound to a unicast address
//     does not.
//   - unicast (peers listed): Broadcast sends to each peer in turn, and only
//     packets whose source IP is a listed peer's are delivered. The source
//     port is not checked, so a one-shot client on a peer's host (`lanleader
//     who`, on an ephemeral port) is heard; authenticity is the keyring's
//     job, not the filter's.
//
// Socket errors after start are logged (at most every logEvery per kind),
// counted and, for reads, retried with backoff: they never stop the
// transport. A failed send is not retried, since the protocol sends again on
// its next tick.
type UDPTransport struct {
	log       *slog.Logger
	local     netip.AddrPort
	bcast     netip.AddrPort      // zero in unicast mode
	peers     []netip.AddrPort    // unicast mode: destinations, without local
	allowed   map[netip.Addr]bool // unicast mode: peer IPs accepted as sources
	conn      *net.UDPConn        // bound to local; sends everything
	bconn     *net.UDPConn        // bound to bcast; receives broadcasts; nil in unicast mode
	packets   chan Packet
	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	stats    counters
	readLog  errLog
	writeLog errLog
}

var _ Transport = (*UDPTransport)(nil)

// NewUDPTransport resolves cfg.Bind and the peers, opens the sockets and
// starts reading. Errors name the setting and value at fault.
func NewUDPTransport(cfg UDPConfig) (*UDPTransport, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	unicast := len(c.Peers) > 0
	bind, err := ResolveBind(c.Bind, !unicast)
	if err != nil {
		return nil, err
	}
	var peers []netip.AddrPort
	if unicast {
		if peers, err = resolvePeers(c.Peers, c.Port); err != nil {
			return nil, err
		}
	}
	return newUDPTransport(c, bind, peers)
}

func newUDPTransport(c UDPConfig, bind BindAddr, peers []netip.AddrPort) (*UDPTransport, error) {
	t := &UDPTransport{
		log:     c.Logger,
		packets: make(chan Packet, c.QueueLen),
		done:    make(chan struct{}),
	}
	conn, err := listen(netip.AddrPortFrom(bind.Addr, uint16(c.ListenPort)), false)
	if err != nil {
		return nil, err
	}
	t.conn = conn
	t.local = netip.AddrPortFrom(bind.Addr, uint16(conn.LocalAddr().(*net.UDPAddr).Port))
	if peers != nil {
		t.allowed = make(map[netip.Addr]bool, len(peers))
		for _, p := range peers {
			t.allowed[p.Addr()] = true
			if p != t.local {
				t.peers = append(t.peers, p)
			}
		}
	} else {
		t.bcast = netip.AddrPortFrom(bind.Broadcast, uint16(c.Port))
		if t.bconn, err = listen(netip.AddrPortFrom(bind.Broadcast, t.local.Port()), true); err != nil {
			conn.Close()
			return nil, err
		}
	}
	t.log = t.log.With("local", t.local.String())
	for _, cn := range []*net.UDPConn{t.conn, t.bconn} {
		if cn != nil {
			t.wg.Add(1)
			go t.readLoop(cn)
		}
	}
	if t.bconn != nil {
		t.log.Info("udp transport up", "mode", "broadcast", "broadcast", t.bcast.String(), "interface", bind.Interface)
	} else {
		t.log.Info("udp transport up", "mode", "unicast", "peers", len(t.peers))
	}
	return t, nil
}

// listen opens a UDP socket on addr with SO_BROADCAST set, and SO_REUSEADDR
// when shared (the broadcast receiver). The unicast socket is not shared, so
// a second node on the same address and port fails loudly at start.
func listen(addr netip.AddrPort, shared bool) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: setBroadcast}
	if shared {
		lc.Control = setReuseAddr
	}
	pc, err := lc.ListenPacket(context.Background(), "udp4", addr.String())
	if err != nil {
		return nil, fmt.Errorf("udp: bind %s: %w", addr, err)
	}
	return pc.(*net.UDPConn), nil
}

// Broadcast sends b to the subnet's broadcast address, or in unicast mode
// to every peer; it returns the errors of the sends that failed.
func (t *UDPTransport) Broadcast(b []byte) error {
	if t.bconn != nil {
		return t.SendTo(b, t.bcast)
	}
	var errs []error
	for _, p := range t.peers {
		if err := t.SendTo(b, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SendTo sends b to one address.
func (t *UDPTransport) SendTo(b []byte, to netip.AddrPort) error {
	select {
	case <-t.done:
		return fmt.Errorf("udp: send to %s: %w", to, net.ErrClosed)
	default:
	}
	n, err := t.conn.WriteToUDPAddrPort(b, to)
	if errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("udp: send to %s: %w", to, err) // raced with Close: not a socket fault
	}
	if err != nil {
		t.stats.writeErrors.Add(1)
		t.writeLog.log(t.log, "udp: send failed", "to", to.String(), "err", err)
		return fmt.Errorf("udp: send to %s: %w", to, err)
	}
	t.stats.packetsOut.Add(1)
	t.stats.bytesOut.Add(uint64(n))
	return nil
}

// Packets returns the channel of received packets; it is closed by Close.
func (t *UDPTransport) Packets() <-chan Packet { return t.packets }

// LocalAddr returns the bound address and port, the source of every packet
// sent.
func (t *UDPTransport) LocalAddr() netip.AddrPort { return t.local }

// BroadcastAddr returns where Broadcast sends in broadcast mode, and false in
// unicast mode.
func (t *UDPTransport) BroadcastAddr() (netip.AddrPort, bool) { return t.bcast, t.bconn != nil }

// Peers returns the resolved peers Broadcast sends to in unicast mode
// (without this node), or nil in broadcast mode.
func (t *UDPTransport) Peers() []netip.AddrPort { return append([]netip.AddrPort(nil), t.peers...) }

// Close closes the sockets, waits for the readers to stop, then closes the
// Packets channel. It is safe to call more than once.
func (t *UDPTransport) Close() error {
	t.closeOnce.Do(func() {
		close(t.done)
		t.closeErr = t.conn.Close()
		if t.bconn != nil {
			t.closeErr = errors.Join(t.closeErr, t.bconn.Close())
		}
		t.wg.Wait()
		close(t.packets)
	})
	return t.closeErr
}

// Stats returns the transport's counters.
func (t *UDPTransport) Stats() TransportStats { return t.stats.snapshot() }

// EchoesSelf reports whether this transport passes the node's own
// broadcasts up: in broadcast mode on Linux, where the kernel loops every
// broadcast back to the sender's sockets through the same input path (and
// firewall) as other hosts' packets. The Elector then sets
// protocol.Config.SelfEcho, so a node that cannot receive knows it.
func (t *UDPTransport) EchoesSelf() bool { return t.bconn != nil && runtime.GOOS == "linux" }
