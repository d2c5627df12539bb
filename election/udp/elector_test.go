package udp_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// cluster is a set of Electors on one in-memory network, for tests that run
// inside a synctest bubble.
type cluster struct {
	t       *testing.T
	net     *memnet.Network
	nodes   []*node
	keyring *wire.Keyring
	payload func() []byte
	// keyFor and idFor, if set, override keyring and the node id per
	// node (misconfiguration tests); every node's log goes to its logs.
	keyFor      func(i int) *wire.Keyring
	idFor       func(i int) string
	expectPeers bool
	// config, if set, adjusts node i's whole config last (quorum mode,
	// an OnPayload of the test's own).
	config func(i int, cfg *udp.Config)
}

type node struct {
	id      string
	addr    netip.AddrPort
	elector *udp.Elector
	cancel  context.CancelFunc
	done    chan error
	stopped bool

	logs logBuffer

	mu      sync.Mutex
	events  []string
	packets map[string]int // "type/result" → count
	leadCtx context.Context
	// payloadAtStart is the last OnPayload seen when leadership started.
	lastPayload, payloadAtStart string
}

func newCluster(t *testing.T, n int) *cluster {
	c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1))}
	for i := 1; i <= n; i++ {
		c.start(i)
	}
	return c
}

func (c *cluster) start(i int) *node {
	nd := &node{
		id:      fmt.Sprintf("n%d", i),
		addr:    netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i)),
		done:    make(chan error, 1),
		packets: make(map[string]int),
	}
	kr := c.keyring
	if c.keyFor != nil {
		kr = c.keyFor(i)
	}
	if c.idFor != nil {
		nd.id = c.idFor(i)
	}
	pc := protocol.DefaultLANConfig()
	pc.NodeID, pc.Cluster = nd.id, "test"
	pc.Rand = rand.New(rand.NewPCG(uint64(i), 7))
	pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(i))
	cfg := udp.Config{
		Protocol:    pc,
		Transport:   c.net.Join(nd.addr),
		Clock:       udp.GoClock{}, // fake time: a suspend-counting clock would run on
		Keyring:     kr,
		ExpectPeers: c.expectPeers,
		Logger:      slog.New(slog.NewTextHandler(&nd.logs, nil)),
		Payload:     c.payload,
		OnPayload: func(h protocol.PeerPayload) error {
			nd.mu.Lock()
			nd.lastPayload = string(h.Payload)
			nd.mu.Unlock()
			return nil
		},
		OnPacket: func(typ, result string) {
			nd.mu.Lock()
			nd.packets[typ+"/"+result]++
			nd.mu.Unlock()
		},
	}
	if c.config != nil {
		c.config(i, &cfg)
	}
	e, err := udp.New(cfg)
	require.NoError(c.t, err)
	nd.elector = e
	ctx, cancel := context.WithCancel(context.Background())
	nd.cancel = cancel
	go func() { nd.done <- e.Run(ctx, nd.callbacks()) }()
	if i-1 < len(c.nodes) {
		c.nodes[i-1] = nd
	} else {
		c.nodes = append(c.nodes, nd)
	}
	return nd
}

func (nd *node) callbacks() election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: func(ctx context.Context, term uint64) {
			nd.mu.Lock()
			defer nd.mu.Unlock()
			nd.events = append(nd.events, "start")
			nd.leadCtx = ctx
			nd.payloadAtStart = nd.lastPayload
		},
		OnStoppedLeading: func() {
			nd.mu.Lock()
			defer nd.mu.Unlock()
			nd.events = append(nd.events, "stop")
		},
	}
}

func (nd *node) eventList() []string {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return append([]string(nil), nd.events...)
}

// crash cuts the node off the network first, so its resign never arrives,
// then stops it: to its peers it simply went silent.
func (c *cluster) crash(nd *node) {
	c.net.Partition([]netip.AddrPort{nd.addr})
	c.stop(nd)
	c.net.Heal()
}

// stop stops the node gracefully (it resigns) and waits for Run to return.
func (c *cluster) stop(nd *node) {
	nd.cancel()
	nd.stopped = true
	require.NoError(c.t, <-nd.done)
}

func (c *cluster) stopAll() {
	for _, nd := range c.nodes {
		if !nd.stopped {
			c.stop(nd)
		}
	}
}

// leaders returns the running nodes that consider themselves leader.
func (c *cluster) leaders(except ...*node) []*node {
	var out []*node
next:
	for _, nd := range c.nodes {
		for _, x := range except {
			if nd == x {
				continue next
			}
		}
		if nd.elector.Status().Role == election.Leader {
			out = append(out, nd)
		}
	}
	return out
}

// advance lets fake time pass by d and waits until every goroutine of the
// bubble is idle again.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func TestElectorsAgreeOnOneLeader(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		t.Run(fmt.Sprint(n, "nodes"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, n)
				defer c.stopAll()
				advance(3 * time.Second)

				leaders := c.leaders()
				require.Len(t, leaders, 1, "exactly one leader")
				want := leaders[0].id
				for _, nd := range c.nodes {
					st := nd.elector.Status()
					assert.Equal(t, want, st.Leader.ID, "%s names the leader", nd.id)
					assert.Equal(t, leaders[0].elector.Status().Term, st.Leader.Term, "%s knows the leader's term", nd.id)
					if nd != leaders[0] {
						// Packets arrive well within the claim window here;
						// over real sockets on a loaded machine they may not
						// (TestLoopbackElectsOneLeader).
						assert.Empty(t, nd.eventList(), "%s never led", nd.id)
					}
				}
				assert.Equal(t, []string{"start"}, leaders[0].eventList())
				assert.True(t, leaders[0].elector.CanActAsLeader())
			})
		})
	}
}

func TestElectorFailsOverWhenLeaderCrashes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3)
		defer c.stopAll()
		advance(3 * time.Second)
		old := c.leaders()
		require.Len(t, old, 1)
		oldTerm := old[0].elector.Status().Term

		c.crash(old[0])
		pc := protocol.DefaultLANConfig()
		bound := time.Duration(pc.MaxMisses)*pc.Interval + pc.Timings().BackoffMax + pc.Timings().ClaimWindow + pc.Interval
		advance(bound)

		next := c.leaders(old[0])
		require.Len(t, next, 1, "a new leader within %v", bound)
		assert.Greater(t, next[0].elector.Status().Term, oldTerm, "terms grow across leaders")
		assert.Equal(t, []string{"start", "stop"}, old[0].eventList(), "the crashed leader stopped leading")
	})
}

func TestElectorResignHandsOverAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3)
		defer c.stopAll()
		advance(3 * time.Second)
		old := c.leaders()
		require.Len(t, old, 1)
		old[0].mu.Lock()
		leadCtx := old[0].leadCtx
		old[0].mu.Unlock()

		c.stop(old[0])
		assert.Error(t, leadCtx.Err(), "leadership context cancelled on resign")
		assert.Equal(t, election.Follower, old[0].elector.Status().Role)

		pc := protocol.DefaultLANConfig()
		advance(pc.Timings().YieldWait)
		next := c.leaders(old[0])
		require.Len(t, next, 1, "a successor within one claim window plus one interval")
	})
}

func TestElectorCountsAndDropsBadPackets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := make([]byte, wire.MinKeyLen)
		kr, err := wire.NewKeyring(key)
		require.NoError(t, err)
		c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), keyring: kr}
		nd := c.start(1)
		defer c.stopAll()
		advance(time.Second)

		attacker := c.net.Join(netip.MustParseAddrPort("198.18.0.99:7483"))
		defer attacker.Close()
		forged := protocol.Message{Type: protocol.Heartbeat, Cluster: "test", From: "evil",
			Incarnation: 1, Seq: 1, Beat: 1, Term: ^uint64(0), Leader: "evil"}
		unsigned, err := wire.Encode(forged, nil)
		require.NoError(t, err)
		otherKey, err := wire.NewKeyring(append(make([]byte, wire.MinKeyLen-1), 1))
		require.NoError(t, err)
		wrongKey, err := wire.Encode(forged, otherKey)
		require.NoError(t, err)
		for _, b := range [][]byte{unsigned, wrongKey, []byte("garbage")} {
			require.NoError(t, attacker.Broadcast(b))
		}
		advance(100 * time.Millisecond)

		st := nd.elector.Status()
		assert.Equal(t, election.Leader, st.Role, "forged heartbeats changed nothing")
		assert.NotEqual(t, "evil", st.Leader.ID)
		nd.mu.Lock()
		defer nd.mu.Unlock()
		dropped := 0
		for k, v := range nd.packets {
			if k != "heartbeat/ok" && k != "query/ok" && k != "claim/ok" {
				dropped += v
			}
		}
		assert.Equal(t, 3, dropped, "every bad packet counted: %v", nd.packets)
	})
}

func TestElectorPublishSendsPayloadAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		payload := []byte("v1")
		c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), payload: func() []byte {
			mu.Lock()
			defer mu.Unlock()
			return payload
		}}
		c.start(1)
		c.start(2)
		defer c.stopAll()
		advance(3 * time.Second)
		leaders := c.leaders()
		require.Len(t, leaders, 1)
		follower := c.nodes[0]
		if follower == leaders[0] {
			follower = c.nodes[1]
		}
		_, _, got := follower.elector.LeaderPayload()
		require.Equal(t, "v1", string(got))

		mu.Lock()
		payload = []byte("v2")
		mu.Unlock()
		leaders[0].elector.Publish()
		synctest.Wait() // no time passes: only an immediate heartbeat can carry v2
		leader, term, got := follower.elector.LeaderPayload()
		assert.Equal(t, "v2", string(got))
		assert.Equal(t, leaders[0].id, leader)
		assert.Equal(t, leaders[0].elector.Status().Term, term)
	})
}

func TestElectorDeliversLeaderPayloadBeforeTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		payloads := map[string]string{} // node id → its ledger
		c := &cluster{t: t, net: memnet.New(memnet.WithSeed(3))}
		for i := 1; i <= 3; i++ {
			id := fmt.Sprintf("n%d", i)
			c.payload = func() []byte {
				mu.Lock()
				defer mu.Unlock()
				return []byte(payloads[id])
			}
			mu.Lock()
			payloads[id] = "ledger of " + id
			mu.Unlock()
			c.start(i)
		}
		defer c.stopAll()
		advance(3 * time.Second)
		old := c.leaders()
		require.Len(t, old, 1)
		mu.Lock()
		payloads[old[0].id] = "instant 12:00 running"
		mu.Unlock()
		old[0].elector.Publish()
		synctest.Wait()
		c.crash(old[0])
		advance(2 * time.Second)

		next := c.leaders(old[0])
		require.Len(t, next, 1)
		next[0].mu.Lock()
		defer next[0].mu.Unlock()
		assert.Equal(t, "instant 12:00 running", next[0].payloadAtStart,
			"the new leader held the old leader's last ledger when its leadership started")
	})
}
