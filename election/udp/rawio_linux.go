package udp

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw datagram I/O. Go's net package makes every socket call through
// syscall.Syscall, which tells the scheduler it may block and, on an idle
// process, wakes the runtime's monitor thread (sysmon) out of its deep
// sleep; sysmon then polls every 20 µs until the process is idle again.
// For a node that does one receive per heartbeat this was two or three of
// its four context switches per packet. A receive or send on a
// non-blocking UDP socket never blocks, so it is made here with
// RawSyscall, inside the net package's own poller loop (syscall.RawConn):
// readiness, deadlines and Close work as with the net package's calls.

// readerOf returns the datagramReader readLoop uses for conn.
func readerOf(conn *net.UDPConn) datagramReader {
	if r := newRawReader(conn); r != nil {
		return r
	}
	return conn
}

// writerOf returns the datagramWriter SendTo uses for conn.
func writerOf(conn *net.UDPConn) datagramWriter {
	if s := newRawSender(conn); s != nil {
		return s
	}
	return conn
}

// rawReader reads datagrams from a UDP socket with raw recvfrom calls, or
// in batches with recvmmsg (readEach). One goroutine reads: the fields
// below are the last call's arguments and result, kept in the struct so
// the read closures are allocated once.
type rawReader struct {
	rc    syscall.RawConn
	zones zoneCache

	buf   []byte
	n     int
	sa    unix.RawSockaddrAny
	errno syscall.Errno
	read  func(fd uintptr) bool

	batch *recvBatch // readEach's buffers, made on its first call
	each  func(b []byte, from netip.AddrPort)
	drain func(fd uintptr) bool
}

// newRawReader returns a reader of conn, or nil if conn has no raw access.
func newRawReader(conn *net.UDPConn) *rawReader {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawReader{rc: rc}
	r.read, r.drain = r.recvfrom, r.recvAll
	return r
}

// readBatch is how many datagrams one recvmmsg call may take. An idle node
// gets one at a time; what matters is that a call returning fewer than it
// asked for has emptied the socket, so waiting for the poller needs no
// second call to learn that (EAGAIN).
const readBatch = 2

// recvBatch is recvmmsg's argument: readBatch message headers, each with
// one buffer and room for its sender's address.
type recvBatch struct {
	msgs  [readBatch]mmsghdr
	iovs  [readBatch]unix.Iovec
	names [readBatch]unix.RawSockaddrAny
	bufs  [readBatch][]byte
}

// mmsghdr is the kernel's struct mmsghdr; Go pads it as C does.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32 // bytes received
}

func newRecvBatch() *recvBatch {
	b := &recvBatch{}
	for i := range b.msgs {
		b.bufs[i] = make([]byte, maxDatagram)
		b.iovs[i].Base = &b.bufs[i][0]
		b.iovs[i].SetLen(maxDatagram)
		b.msgs[i].hdr.Iov = &b.iovs[i]
		b.msgs[i].hdr.SetIovlen(1)
		b.msgs[i].hdr.Name = (*byte)(unsafe.Pointer(&b.names[i]))
	}
	return b
}

// readEach hands every datagram the socket receives to each, inside one
// long Read of the net package's poller, until a receive fails or the
// socket is closed; it returns that error. The datagram is only valid
// during the call.
func (r *rawReader) readEach(each func(b []byte, from netip.AddrPort)) error {
	if r.batch == nil {
		r.batch = newRecvBatch()
	}
	r.each, r.errno = each, 0
	defer func() { r.each = nil }()
	if err := r.rc.Read(r.drain); err != nil {
		return err
	}
	return &net.OpError{Op: "read", Net: "udp", Err: r.errno}
}

// recvAll receives what is queued, readBatch datagrams per call, hands
// each to r.each, and then asks the poller to wait for more (false); it
// returns true only when a receive fails (r.errno).
func (r *rawReader) recvAll(fd uintptr) bool {
	b := r.batch
	for {
		for i := range b.msgs {
			b.msgs[i].hdr.Namelen = unix.SizeofSockaddrAny
			b.msgs[i].hdr.Flags = 0
		}
		got, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, fd,
			uintptr(unsafe.Pointer(&b.msgs[0])), readBatch, unix.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0:
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			r.errno = errno
			return true
		}
		for i := range int(got) {
			m := &b.msgs[i]
			if m.hdr.Flags&unix.MSG_TRUNC != 0 {
				continue // larger than any UDP datagram: cannot happen
			}
			r.each(b.bufs[i][:m.n], r.zones.from(&b.names[i]))
		}
		if got < readBatch {
			return false // the socket is empty: a later datagram wakes the poller
		}
	}
}

func (r *rawReader) recvfrom(fd uintptr) bool {
	for {
		salen := uint32(unix.SizeofSockaddrAny)
		n, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, fd,
			uintptr(unsafe.Pointer(unsafe.SliceData(r.buf))), uintptr(len(r.buf)), 0,
			uintptr(unsafe.Pointer(&r.sa)), uintptr(unsafe.Pointer(&salen)))
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait for the poller: nothing queued
		}
		r.n, r.errno = int(n), errno
		return true
	}
}

// ReadFromUDPAddrPort is net.UDPConn's method of that name (datagramReader).
func (r *rawReader) ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error) {
	r.buf = b
	if err := r.rc.Read(r.read); err != nil {
		return 0, netip.AddrPort{}, err
	}
	if r.errno != 0 {
		return 0, netip.AddrPort{}, &net.OpError{Op: "read", Net: "udp", Err: r.errno}
	}
	return r.n, r.from(), nil
}

// from decodes the sender's address of the last datagram recvfrom read.
func (r *rawReader) from() netip.AddrPort { return r.zones.from(&r.sa) }

// from decodes a sender's address in the kernel's form, naming the
// interface of a link-local sender's scope id.
func (z *zoneCache) from(rsa *unix.RawSockaddrAny) netip.AddrPort {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), netPort(&sa.Port))
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		a := netip.AddrFrom16(sa.Addr)
		if sa.Scope_id != 0 {
			a = a.WithZone(z.name(sa.Scope_id))
		}
		return netip.AddrPortFrom(a, netPort(&sa.Port))
	}
	return netip.AddrPort{}
}

// netPort reads a port stored in network byte order.
func netPort(p *uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(p))
	return uint16(b[0])<<8 | uint16(b[1])
}

// zoneCache names the interface of a link-local sender's scope id. It
// remembers the last one looked up: on a node every link-local peer is on
// the bound interface.
type zoneCache struct {
	index uint32
	zone  string
}

func (z *zoneCache) name(index uint32) string {
	if index != z.index || z.zone == "" {
		z.index, z.zone = index, strconv.FormatUint(uint64(index), 10)
		if ifi, err := net.InterfaceByIndex(int(index)); err == nil {
			z.zone = ifi.Name
		}
	}
	return z.zone
}

// rawSender sends datagrams from a UDP socket with raw sendto calls.
type rawSender struct {
	conn *net.UDPConn
	rc   syscall.RawConn

	mu    sync.Mutex // one send at a time: the fields below are its arguments
	zones zoneIndexes
	buf   []byte
	sa    unix.RawSockaddrInet6 // large enough for either family
	salen uint32
	errno syscall.Errno
	write func(fd uintptr) bool
}

// newRawSender returns a sender on conn, or nil if conn has no raw access.
func newRawSender(conn *net.UDPConn) *rawSender {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil
	}
	s := &rawSender{conn: conn, rc: rc}
	s.write = s.sendto
	return s
}

// setDest stores ap in the kernel's form; false if its zone names no
// interface.
func (s *rawSender) setDest(ap netip.AddrPort) bool {
	s.sa = unix.RawSockaddrInet6{}
	port := [2]byte{byte(ap.Port() >> 8), byte(ap.Port())}
	a := ap.Addr()
	if a.Is4() {
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&s.sa))
		sa.Family = unix.AF_INET
		*(*[2]byte)(unsafe.Pointer(&sa.Port)) = port
		sa.Addr = a.As4()
		s.salen = unix.SizeofSockaddrInet4
		return true
	}
	s.sa.Family = unix.AF_INET6
	*(*[2]byte)(unsafe.Pointer(&s.sa.Port)) = port
	s.sa.Addr = a.As16()
	if z := a.Zone(); z != "" {
		i, ok := s.zones.lookup(z)
		if !ok {
			return false
		}
		s.sa.Scope_id = i
	}
	s.salen = unix.SizeofSockaddrInet6
	return true
}

func (s *rawSender) sendto(fd uintptr) bool {
	for {
		_, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, fd,
			uintptr(unsafe.Pointer(unsafe.SliceData(s.buf))), uintptr(len(s.buf)), 0,
			uintptr(unsafe.Pointer(&s.sa)), uintptr(s.salen))
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // socket buffer full: wait for the poller
		}
		s.errno = errno
		return true
	}
}

// WriteToUDPAddrPort is net.UDPConn's method of that name.
func (s *rawSender) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.setDest(to) {
		return s.conn.WriteToUDPAddrPort(b, to) // its error names the zone
	}
	s.buf = b
	err := s.rc.Write(s.write)
	s.buf = nil
	if err != nil {
		return 0, err
	}
	if s.errno != 0 {
		return 0, &net.OpError{Op: "write", Net: "udp", Addr: net.UDPAddrFromAddrPort(to), Err: s.errno}
	}
	return len(b), nil
}

// zoneIndexes is zoneCache's reverse: the index of an IPv6 zone, numeric
// or an interface name, remembering the last name looked up.
type zoneIndexes struct {
	zone string
	idx  uint32
}

func (z *zoneIndexes) lookup(zone string) (uint32, bool) {
	if i, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(i), true
	}
	if zone != z.zone {
		ifi, err := net.InterfaceByName(zone)
		if err != nil {
			return 0, false
		}
		z.zone, z.idx = zone, uint32(ifi.Index)
	}
	return z.idx, true
}
