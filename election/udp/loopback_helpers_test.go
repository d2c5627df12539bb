package udp_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// Real sockets cannot live in a synctest bubble, so the loopback tests poll
// real time. patience only bounds a hung test (on a loaded -race runner an
// election takes well under a second); nothing asserts how fast anything was.
const (
	patience = 10 * time.Second
	pollTick = 2 * time.Millisecond
)

// loopCluster is the cluster name of every loopback test cluster.
const loopCluster = "loop"

var quiet = slog.New(slog.DiscardHandler)

// fastConfig is DefaultLANConfig sped up tenfold so elections take tens of
// milliseconds. Misses stays above the default 3 so that a scheduler stall
// on a loaded -race runner (two CPUs shared with other test binaries) does
// not look like a dead leader: tests that assert "nothing changed" would
// otherwise flake on a genuine but spurious failover.
func fastConfig() protocol.Config {
	pc := protocol.DefaultLANConfig()
	pc.Cluster = loopCluster
	pc.Interval = 20 * time.Millisecond
	pc.ClaimWindow = 5 * time.Millisecond
	pc.Misses = 5
	pc.MaxMisses = 10
	return pc
}

// loopPorts returns n UDP ports on 127.0.0.1 that were free a moment ago.
// The sockets are held open together so the ports differ, then closed so
// the nodes can bind them.
func loopPorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		defer c.Close()
		ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
	}
	return ports
}

// loopOptions shape a loopback cluster.
type loopOptions struct {
	// n is the number of electors.
	n int
	// keyring, if set, authenticates every node's packets.
	keyring *wire.Keyring
	// extraPeers are listed in every node's Peers besides the nodes
	// themselves: a raw socket that captures or injects packets.
	extraPeers []netip.AddrPort
	// edit, if set, adjusts each node's protocol config.
	edit func(pc *protocol.Config)
	// clock, if set, is every elector's Config.Clock.
	clock udp.Clock
}

// loopback is a cluster of real UDP electors on 127.0.0.1, in unicast mode
// with one shared peer list, as a config file shared by the nodes would
// have it.
type loopback struct {
	t     *testing.T
	nodes []*loopNode
}

// loopNode is one elector of a loopback cluster.
type loopNode struct {
	id      string
	tr      *udp.UDPTransport
	elector *udp.Elector
	cancel  context.CancelFunc
	done    chan error
	exited  bool

	mu      sync.Mutex
	events  []string       // "start" and "stop", in callback order
	packets map[string]int // "type/result" → count, from Config.OnPacket
	leadCtx context.Context
}

// newLoopback binds every node's socket first and only then starts the
// electors, so no node's start-up QUERY goes to a port nobody holds yet.
func newLoopback(t *testing.T, o loopOptions) *loopback {
	t.Helper()
	ports := loopPorts(t, o.n)
	var peers []string
	for _, p := range ports {
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", p))
	}
	for _, p := range o.extraPeers {
		peers = append(peers, p.String())
	}
	c := &loopback{t: t}
	t.Cleanup(c.stopAll) // safety net if a require fails before the test's own stopAll
	for i, port := range ports {
		tr, err := udp.NewUDPTransport(udp.UDPConfig{Bind: "127.0.0.1", Port: port, Peers: peers, Logger: quiet})
		require.NoError(t, err)
		c.nodes = append(c.nodes, &loopNode{
			id:      fmt.Sprintf("n%d", i+1),
			tr:      tr,
			done:    make(chan error, 1),
			packets: make(map[string]int),
		})
	}
	for i, nd := range c.nodes {
		pc := fastConfig()
		if o.edit != nil {
			o.edit(&pc)
		}
		pc.NodeID = nd.id
		pc.Addr = nd.tr.LocalAddr().String()
		pc.Rand = rand.New(rand.NewPCG(uint64(i+1), uint64(time.Now().UnixNano())))
		pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(i+1))
		e, err := udp.New(udp.Config{
			Protocol:  pc,
			Transport: nd.tr,
			Keyring:   o.keyring,
			Logger:    quiet,
			OnPacket:  nd.countPacket,
			Clock:     o.clock,
		})
		require.NoError(t, err)
		nd.elector = e
		ctx, cancel := context.WithCancel(context.Background())
		nd.cancel = cancel
		go func() { nd.done <- e.Run(ctx, nd.callbacks()) }()
	}
	return c
}

func (nd *loopNode) countPacket(typ, result string) {
	nd.mu.Lock()
	nd.packets[typ+"/"+result]++
	nd.mu.Unlock()
}

// count returns how many packets OnPacket reported as key ("type/result").
func (nd *loopNode) count(key string) int {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.packets[key]
}

func (nd *loopNode) callbacks() election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: func(ctx context.Context, _ uint64) {
			nd.mu.Lock()
			defer nd.mu.Unlock()
			nd.events = append(nd.events, "start")
			nd.leadCtx = ctx
		},
		OnStoppedLeading: func() {
			nd.mu.Lock()
			defer nd.mu.Unlock()
			nd.events = append(nd.events, "stop")
		},
	}
}

func (nd *loopNode) eventList() []string {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return append([]string(nil), nd.events...)
}

// leadership returns the context of the node's latest leadership.
func (nd *loopNode) leadership() context.Context {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.leadCtx
}

// wait waits (boundedly) for Run to return and gives its error.
func (nd *loopNode) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-nd.done:
		nd.exited = true
		return err
	case <-time.After(patience):
		require.FailNowf(t, "Run did not return", "node %s, within %v", nd.id, patience)
		return nil
	}
}

// stop stops nd gracefully (it resigns) and waits for Run to return nil.
func (c *loopback) stop(nd *loopNode) {
	c.t.Helper()
	nd.cancel()
	require.NoError(c.t, nd.wait(c.t), "node %s", nd.id)
}

// crash kills nd the way a crash or a pulled cable would: the socket goes
// first, so the RESIGN that Run sends on its way out cannot reach anyone;
// only then is the context cancelled. Run's error is not checked: it says
// "transport closed" or, had it seen the cancel first, nothing.
func (c *loopback) crash(nd *loopNode) {
	c.t.Helper()
	require.NoError(c.t, nd.tr.Close())
	nd.cancel()
	nd.wait(c.t)
}

// stopAll stops every node still running; it is safe to call twice.
func (c *loopback) stopAll() {
	for _, nd := range c.nodes {
		if !nd.exited {
			nd.cancel()
			nd.wait(c.t)
		}
	}
}

// running returns the nodes whose Run has not returned.
func (c *loopback) running() []*loopNode {
	var out []*loopNode
	for _, nd := range c.nodes {
		if !nd.exited {
			out = append(out, nd)
		}
	}
	return out
}

// agreed reports the leader if exactly one of nodes leads, has been told
// so, and every one of them names it, with the same term.
func agreed(nodes []*loopNode) (*loopNode, bool) {
	var leader *loopNode
	for _, nd := range nodes {
		if nd.elector.Status().Role == election.Leader {
			if leader != nil {
				return nil, false
			}
			leader = nd
		}
	}
	if leader == nil {
		return nil, false
	}
	// Status flips to Leader just before OnStartedLeading runs: wait for
	// the callback too, so tests can read the leadership context.
	if ev := leader.eventList(); len(ev) == 0 || ev[len(ev)-1] != "start" {
		return nil, false
	}
	want := leader.elector.Status().Leader
	for _, nd := range nodes {
		got := nd.elector.Status().Leader
		if got.ID != want.ID || got.Term != want.Term {
			return nil, false
		}
	}
	return leader, true
}

// waitAgreement polls until the running nodes agree on one leader and
// returns it.
func (c *loopback) waitAgreement() *loopNode {
	c.t.Helper()
	leader, _ := c.waitAgreedTerm()
	return leader
}

// waitAgreedTerm is waitAgreement that also returns the term the nodes
// agreed on, read as they agreed: a stall of the test machine may depose
// that leader a moment later, and its Status would then name no term.
func (c *loopback) waitAgreedTerm() (*loopNode, uint64) {
	c.t.Helper()
	var leader *loopNode
	var term uint64
	require.Eventually(c.t, func() bool {
		var ok bool
		leader, ok = agreed(c.running())
		if ok {
			term = leader.elector.Status().Leader.Term
		}
		return ok && term != 0
	}, patience, pollTick, "the running nodes never agreed on one leader")
	return leader, term
}

// holdAgreement waits for the running nodes to agree on a leader, calls
// ready (which may wait for more of the protocol to happen), then holds
// clk still and returns the leader, once every node has handled what was
// due when the clock stopped and it is still the agreed leader, every
// other node following it. From then on no node's deadline passes until
// clk is released: only the test's own packets can change a node's state.
// A stall of the machine that deposed the leader before the hold (its
// followers waited out their suspicion) is waited out: the attempt starts
// over, at most holdAttempts times.
func (c *loopback) holdAgreement(clk *stillClock, ready func(leader *loopNode)) *loopNode {
	c.t.Helper()
	for range holdAttempts {
		leader := c.waitAgreement()
		if ready != nil {
			ready(leader)
		}
		clk.hold()
		held := clk.Now()
		require.Eventually(c.t, func() bool {
			for _, nd := range c.running() {
				if !nd.elector.NextDeadline().After(held) {
					return false
				}
			}
			return true
		}, patience, pollTick, "the nodes never handled what was due as the clock stopped")
		if l, ok := agreed(c.running()); ok && l == leader && c.othersFollow(leader) {
			return leader
		}
		clk.release()
	}
	require.FailNow(c.t, "no agreement lasted until the clock was held", "%d attempts", holdAttempts)
	return nil
}

// othersFollow reports whether every running node but leader is a
// follower: no claim of theirs is under way.
func (c *loopback) othersFollow(leader *loopNode) bool {
	for _, nd := range c.running() {
		if nd != leader && nd.elector.Status().Role != election.Follower {
			return false
		}
	}
	return true
}

// holdAttempts bounds holdAgreement's attempts.
const holdAttempts = 5

// stillClock is an Elector clock (udp.Clock) a test can hold still. While
// held, Now stays at the instant it was held, so no deadline passes
// however late the machine runs the test's goroutines; a test asserting
// that nothing changed then sees what its packets did, and not a genuine
// failover that a stall of a loaded machine caused. Released, it runs on
// from where it stood, the held span left out, so no node sees a jump
// (which it would take for a pause).
type stillClock struct {
	mu     sync.Mutex
	held   bool
	at     time.Time     // Now while held
	behind time.Duration // total span held: Now is time.Now() minus this
}

var _ udp.Clock = (*stillClock)(nil)

func (c *stillClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		return c.at
	}
	return time.Now().Add(-c.behind)
}

// hold stops the clock where it stands.
func (c *stillClock) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held {
		c.at, c.held = time.Now().Add(-c.behind), true
	}
}

// release lets the clock run on from where hold stopped it.
func (c *stillClock) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		c.behind, c.held = time.Since(c.at), false
	}
}

// snapshot is the part of a node's state that a dropped packet must not
// change.
type snapshot struct {
	role          election.Role
	leader        election.LeaderInfo
	term          uint64
	leaderChanges uint64
}

func (nd *loopNode) snapshot() snapshot {
	st := nd.elector.Status()
	return snapshot{role: st.Role, leader: st.Leader, term: st.Term, leaderChanges: nd.elector.Stats().LeaderChanges}
}
