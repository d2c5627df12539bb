package memnet

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/lanleader/lanleader/election/udp"
)

// Network connects the Transports that joined it. It is safe for concurrent
// use.
type Network struct {
	mu       sync.Mutex
	nodes    map[netip.AddrPort]*Transport
	group    map[netip.AddrPort]int // partition group; absent means group 0
	blocked  map[link]bool          // one-way cuts
	loss     float64
	delay    time.Duration
	rng      *rand.Rand
	queueLen int
	stats    Stats
}

type link struct{ from, to netip.AddrPort }

// Stats counts what happened to packets on a Network.
type Stats struct {
	// Delivered packets reached a receiver's queue.
	Delivered uint64
	// Lost packets were dropped by the random loss rate.
	Lost uint64
	// Blocked packets were dropped by a partition or a one-way block.
	Blocked uint64
	// NoRoute packets were sent to an address no open node holds.
	NoRoute uint64
	// QueueFull packets found the receiver's queue full.
	QueueFull uint64
}

// Option configures a Network.
type Option func(*Network)

// WithSeed seeds the random loss, so a run replays exactly. The default seed
// is 1.
func WithSeed(seed uint64) Option {
	return func(n *Network) { n.rng = rand.New(rand.NewPCG(seed, seed)) }
}

// WithQueueLen sets each Transport's receive queue capacity (default 256);
// packets arriving at a full queue are dropped, as a socket buffer would.
func WithQueueLen(q int) Option {
	return func(n *Network) { n.queueLen = max(q, 1) }
}

// New returns an empty, fully connected network without loss or delay.
func New(opts ...Option) *Network {
	n := &Network{
		nodes:    make(map[netip.AddrPort]*Transport),
		group:    make(map[netip.AddrPort]int),
		blocked:  make(map[link]bool),
		rng:      rand.New(rand.NewPCG(1, 1)),
		queueLen: 256,
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

// Join adds a node at addr and returns its Transport. A node that closed
// its Transport may join again at the same address (a restart). Joining an
// address an open Transport holds is a bug in the test and panics.
func (n *Network) Join(addr netip.AddrPort) *Transport {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.nodes[addr]; ok {
		panic(fmt.Sprintf("memnet: %s joined twice", addr))
	}
	t := &Transport{net: n, addr: addr, packets: make(chan udp.Packet, n.queueLen)}
	n.nodes[addr] = t
	return t
}

// Partition splits the network: nodes in the same group reach each other,
// nodes in different groups do not. Nodes not listed form one more group
// together. It replaces any earlier partition; one-way blocks stay.
func (n *Network) Partition(groups ...[]netip.AddrPort) {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.group)
	for i, g := range groups {
		for _, a := range g {
			n.group[a] = i + 1
		}
	}
}

// Block drops every packet from one address to another (one way).
func (n *Network) Block(from, to netip.AddrPort) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.blocked[link{from, to}] = true
}

// Unblock undoes Block.
func (n *Network) Unblock(from, to netip.AddrPort) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.blocked, link{from, to})
}

// Heal removes the partition and every one-way block.
func (n *Network) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.group)
	clear(n.blocked)
}

// SetLoss drops each packet with probability rate (0 to 1), independently.
func (n *Network) SetLoss(rate float64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.loss = min(max(rate, 0), 1)
}

// SetDelay delays every packet by d (0: delivered during the send call).
func (n *Network) SetDelay(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.delay = max(d, 0)
}

// Stats returns the network's counters.
func (n *Network) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// send routes one packet; it is called with n.mu held.
func (n *Network) send(from, to netip.AddrPort, b []byte) {
	if n.blocked[link{from, to}] || n.group[from] != n.group[to] {
		n.stats.Blocked++
		return
	}
	if n.loss > 0 && n.rng.Float64() < n.loss {
		n.stats.Lost++
		return
	}
	data := append([]byte(nil), b...)
	if n.delay == 0 {
		n.deliver(from, to, data)
		return
	}
	time.AfterFunc(n.delay, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.deliver(from, to, data)
	})
}

// deliver queues data at whichever open node holds to now; n.mu is held.
func (n *Network) deliver(from, to netip.AddrPort, data []byte) {
	t, ok := n.nodes[to]
	if !ok {
		n.stats.NoRoute++
		return
	}
	t.stats.PacketsIn++
	t.stats.BytesIn += uint64(len(data))
	select {
	case t.packets <- udp.Packet{Data: data, From: from, At: time.Now()}:
		n.stats.Delivered++
	default:
		n.stats.QueueFull++
		t.stats.DroppedQueueFull++
	}
}
