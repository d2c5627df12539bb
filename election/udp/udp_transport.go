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
	"sync/atomic"
	"syscall"

	"github.com/lanleader/lanleader/internal/ratelog"
)

// UDPTransport is the Transport over real UDP sockets, in one of three
// modes (Mode):
//
//   - broadcast: Broadcast sends to the bound IPv4 subnet's directed
//     broadcast address. A second socket bound to that broadcast address
//     receives broadcasts, since on Linux a socket bound to a unicast address
//     does not.
//   - multicast: Broadcast sends to the cluster's multicast group with a hop
//     limit of 1; a second socket bound to the group and joined to it on the
//     bound interface receives. IPv4 or IPv6.
//   - unicast (peers listed): Broadcast sends to each peer in turn, and only
//     packets whose source IP is a listed peer's are delivered. The source
//     port is not checked, so a one-shot client on a peer's host (`lanleader
//     who`, on an ephemeral port) is heard; authenticity is the keyring's
//     job, not the filter's.
//
// Every packet is sent from the socket bound to the node's own address, so
// peers see (and probe) that address.
//
// Socket errors after start are logged (at most every ratelog.DefaultEvery per kind),
// counted and, for reads, retried with backoff: they never stop the
// transport. A failed send is not retried, since the protocol sends again on
// its next tick.
type UDPTransport struct {
	log       *slog.Logger
	mode      Mode
	local     netip.AddrPort
	fanout    netip.AddrPort      // broadcast address or group; zero in unicast mode
	peers     []netip.AddrPort    // unicast mode: destinations, without local
	allowed   map[netip.Addr]bool // unicast mode: peer IPs (without zone) accepted as sources
	conn      *net.UDPConn        // bound to local; sends everything
	writer    datagramWriter      // conn's sending side (rawio_linux.go)
	rconn     *net.UDPConn        // bound to fanout; receives broadcasts or the group; nil in unicast mode
	packets   chan Packet
	handoff   atomic.Pointer[func(Packet)] // set: deliver calls it instead of queueing (handoff.go)
	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	stats    counters
	readLog  ratelog.Limiter
	writeLog ratelog.Limiter
}

var _ Transport = (*UDPTransport)(nil)

// NewUDPTransport resolves cfg.Bind and the peers, opens the sockets and
// starts reading. Errors name the setting and value at fault.
func NewUDPTransport(cfg UDPConfig) (*UDPTransport, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if c.Mode, err = c.Mode.Resolve(len(c.Peers)); err != nil {
		return nil, err
	}
	bind, err := ResolveBind(c.Bind, c.Mode)
	if err != nil {
		return nil, err
	}
	var peers []netip.AddrPort
	if c.Mode == ModeUnicast {
		if peers, err = resolvePeers(c.Peers, c.Port, bind.Addr.Is4()); err != nil {
			return nil, err
		}
	}
	var group netip.Addr
	if c.Mode == ModeMulticast {
		if group, err = ResolveGroup(c.Group, c.Cluster, bind.Addr); err != nil {
			return nil, err
		}
	}
	return newUDPTransport(c, bind, peers, group)
}

func newUDPTransport(c UDPConfig, bind BindAddr, peers []netip.AddrPort, group netip.Addr) (*UDPTransport, error) {
	t := &UDPTransport{
		log:     c.Logger,
		mode:    c.Mode,
		packets: make(chan Packet, c.QueueLen),
		done:    make(chan struct{}),
	}
	conn, err := listen(netip.AddrPortFrom(bind.Addr, uint16(c.ListenPort)), false)
	if err != nil {
		return nil, err
	}
	t.conn = conn
	t.local = netip.AddrPortFrom(bind.Addr, uint16(conn.LocalAddr().(*net.UDPAddr).Port))
	switch c.Mode {
	case ModeUnicast:
		t.allowed = make(map[netip.Addr]bool, len(peers))
		for _, p := range peers {
			t.allowed[p.Addr().WithZone("")] = true
			if p != t.local {
				t.peers = append(t.peers, p)
			}
		}
	case ModeBroadcast:
		t.fanout = netip.AddrPortFrom(bind.Broadcast, uint16(c.Port))
		t.rconn, err = listen(netip.AddrPortFrom(bind.Broadcast, t.local.Port()), true)
	case ModeMulticast:
		if group.IsLinkLocalMulticast() || group.IsInterfaceLocalMulticast() {
			group = group.WithZone(bind.Interface) // link-local scope: say which link
		}
		t.fanout = netip.AddrPortFrom(group, uint16(c.Port))
		t.rconn, err = listenGroup(bind, netip.AddrPortFrom(group, t.local.Port()))
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	t.log = t.log.With("local", t.local.String())
	t.writer = writerOf(t.conn)
	for _, cn := range []*net.UDPConn{t.conn, t.rconn} {
		if cn != nil {
			t.wg.Add(1)
			go t.readLoop(readerOf(cn))
		}
	}
	if c.Mode == ModeUnicast {
		t.log.Info("udp transport up", "mode", c.Mode, "peers", len(t.peers))
	} else {
		t.log.Info("udp transport up", "mode", c.Mode, "to", t.fanout.String(), "interface", bind.Interface)
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
	pc, err := lc.ListenPacket(context.Background(), udpNetwork(addr.Addr()), addr.String())
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		// Listed on its interface but not usable yet: a link that is down
		// (the kernel drops the local broadcast route with it), an IPv6
		// address still tentative. It comes up by itself: wait, as for a
		// bind address no interface has.
		return nil, notUp{fmt.Errorf("udp: bind %s: address not up (is its link down?): %w", addr, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("udp: bind %s: %w", addr, err)
	}
	return pc.(*net.UDPConn), nil
}

// listenGroup opens the multicast receiver: bound to the group and port
// (shared, so several nodes of one host can listen) and joined to the group
// on the bound interface.
func listenGroup(bind BindAddr, group netip.AddrPort) (*net.UDPConn, error) {
	ifi, err := net.InterfaceByName(bind.Interface)
	if err != nil {
		return nil, fmt.Errorf("udp: multicast group %s: interface %q: %w", group.Addr(), bind.Interface, err)
	}
	conn, err := listenGroupSocket(group, bind.Addr, ifi.Index)
	if err != nil {
		return nil, fmt.Errorf("udp: multicast group %s on %s: %w", group, bind.Interface, err)
	}
	return conn, nil
}

// Broadcast sends b to the subnet's broadcast address or the multicast
// group, or in unicast mode to every peer; it returns the errors of the
// sends that failed.
func (t *UDPTransport) Broadcast(b []byte) error {
	if t.rconn != nil {
		return t.SendTo(b, t.fanout)
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
	n, err := t.writer.WriteToUDPAddrPort(b, to)
	if errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("udp: send to %s: %w", to, err) // raced with Close: not a socket fault
	}
	if err != nil {
		t.stats.writeErrors.Add(1)
		t.writeLog.Warn(t.log, "udp: send failed", "to", to.String(), "err", err)
		return fmt.Errorf("udp: send to %s: %w", to, err)
	}
	t.stats.packetsOut.Add(1)
	t.stats.bytesOut.Add(uint64(n))
	return nil
}

// Packets returns the channel of received packets; it is closed by Close.
// After HandOff, no more packets are queued on it.
func (t *UDPTransport) Packets() <-chan Packet { return t.packets }

// HandOff makes the readers call h for each packet they receive from then
// on, on their own goroutines (one per socket), instead of queueing it on
// Packets. p.Data is only valid during the call. The Elector uses it
// (handoff.go); clients reading Packets do not.
func (t *UDPTransport) HandOff(h func(p Packet)) { t.handoff.Store(&h) }

// LocalAddr returns the bound address and port, the source of every packet
// sent.
func (t *UDPTransport) LocalAddr() netip.AddrPort { return t.local }

// BroadcastAddr returns where Broadcast sends in broadcast and multicast
// mode (the broadcast address or the group), and false in unicast mode.
func (t *UDPTransport) BroadcastAddr() (netip.AddrPort, bool) { return t.fanout, t.rconn != nil }

// Mode returns the transport's mode (never ModeAuto).
func (t *UDPTransport) Mode() Mode { return t.mode }

// Peers returns the resolved peers Broadcast sends to in unicast mode
// (without this node), or nil in broadcast mode.
func (t *UDPTransport) Peers() []netip.AddrPort { return append([]netip.AddrPort(nil), t.peers...) }

// Close closes the sockets, waits for the readers to stop, then closes the
// Packets channel. It is safe to call more than once.
func (t *UDPTransport) Close() error {
	t.closeOnce.Do(func() {
		close(t.done)
		t.closeErr = t.conn.Close()
		if t.rconn != nil {
			t.closeErr = errors.Join(t.closeErr, t.rconn.Close())
		}
		t.wg.Wait()
		close(t.packets)
	})
	return t.closeErr
}

// Stats returns the transport's counters.
func (t *UDPTransport) Stats() TransportStats { return t.stats.snapshot() }

// EchoesSelf reports whether this transport passes the node's own
// broadcasts up: in broadcast and multicast mode on Linux, where the kernel
// loops every broadcast (and, with IP_MULTICAST_LOOP, on by default, every
// multicast) back to the sender's sockets through the same input path (and
// firewall) as other hosts' packets. The Elector then sets
// protocol.Config.SelfEcho, so a node that cannot receive knows it.
func (t *UDPTransport) EchoesSelf() bool { return t.rconn != nil && runtime.GOOS == "linux" }
