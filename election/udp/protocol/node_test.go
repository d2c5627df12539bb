package protocol

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testConfig(id string, prio uint8, seed uint64) Config {
	c := DefaultLANConfig()
	c.NodeID = id
	c.Cluster = "test"
	c.Priority = prio
	c.Incarnation = NewIncarnation(1000, uint16(seed))
	c.Rand = rand.New(rand.NewPCG(seed, 7))
	return c
}

// net is a tiny loss-free, zero-delay harness: messages are delivered
// when pump runs, in order. The real simulator is package udptest.
type net struct {
	nodes map[string]*Node
	down  map[string]bool
	now   time.Time
	// lose, if set, drops the messages it returns true for (all copies).
	lose func(from string, e Envelope) bool
}

func newNet(t *testing.T, prios map[string]uint8) *net {
	t.Helper()
	nw := &net{nodes: map[string]*Node{}, down: map[string]bool{}, now: t0}
	i := uint64(1)
	for id, p := range prios {
		n, err := NewNode(testConfig(id, p, i), t0)
		require.NoError(t, err)
		nw.nodes[id] = n
		i++
	}
	nw.pump()
	return nw
}

func (nw *net) pump() {
	for {
		moved := false
		for id, n := range nw.nodes {
			for _, e := range n.Ready() {
				moved = true
				if nw.down[id] || (nw.lose != nil && nw.lose(id, e)) {
					continue
				}
				for to, r := range nw.nodes {
					if to == id || nw.down[to] || (e.To != "" && e.To != to) {
						continue
					}
					m := e.Msg
					m.Addr = "addr-" + id
					r.Step(nw.now, m)
				}
			}
		}
		if !moved {
			return
		}
	}
}

// run advances time in 1ms steps, ticking due nodes.
func (nw *net) run(d time.Duration) {
	end := nw.now.Add(d)
	for nw.now.Before(end) {
		nw.now = nw.now.Add(time.Millisecond)
		for id, n := range nw.nodes {
			if !nw.down[id] && !n.NextTick().After(nw.now) {
				n.Tick(nw.now)
			}
		}
		nw.pump()
	}
}

func (nw *net) leaders() []string {
	var ls []string
	for id, n := range nw.nodes {
		if !nw.down[id] && n.Status().Role == election.Leader {
			ls = append(ls, id)
		}
	}
	return ls
}

func TestElectsOneLeaderAndAllAgree(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 100, "b": 100, "c": 100})
	nw.run(2 * time.Second)
	ls := nw.leaders()
	require.Len(t, ls, 1)
	for id, n := range nw.nodes {
		st := n.Status()
		assert.Equal(t, ls[0], st.Leader.ID, "node %s", id)
	}
	lead := nw.nodes[ls[0]]
	assert.True(t, lead.CanActAsLeader(nw.now))
	assert.Greater(t, TermRound(lead.Status().Leader.Term), uint64(0))
}

func TestHighestPriorityWinsStartup(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 10, "b": 250, "c": 10})
	nw.run(2 * time.Second)
	assert.Equal(t, []string{"b"}, nw.leaders())
}

func TestFailoverAfterCrash(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 100, "b": 100, "c": 100})
	nw.run(2 * time.Second)
	old := nw.leaders()[0]
	oldTerm := nw.nodes[old].Status().Leader.Term
	nw.down[old] = true
	nw.run(time.Second)
	ls := nw.leaders()
	require.Len(t, ls, 1)
	assert.NotEqual(t, old, ls[0])
	assert.Greater(t, nw.nodes[ls[0]].Status().Leader.Term, oldTerm, "terms must grow across leaders")
}

func TestResignHandsOverFast(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 100, "b": 100, "c": 100})
	nw.run(2 * time.Second)
	old := nw.leaders()[0]
	nw.nodes[old].Resign(nw.now)
	nw.pump()
	cfg := DefaultLANConfig()
	nw.run(cfg.ClaimWindow + cfg.Interval)
	ls := nw.leaders()
	require.Len(t, ls, 1)
	assert.NotEqual(t, old, ls[0])
	assert.Empty(t, nw.nodes[old].Ready(), "a resigned node stays quiet")
	assert.False(t, nw.nodes[old].CanActAsLeader(nw.now))
}

func TestNoPreemptionByDefaultButWithPreempt(t *testing.T) {
	for _, preempt := range []bool{false, true} {
		t.Run(fmt.Sprint("preempt=", preempt), func(t *testing.T) {
			nw := newNet(t, map[string]uint8{"a": 100, "b": 100})
			nw.run(2 * time.Second)
			old := nw.leaders()[0]
			c := testConfig("z", 200, 99)
			c.Preempt = preempt
			z, err := NewNode(c, nw.now)
			require.NoError(t, err)
			nw.nodes["z"] = z
			nw.pump()
			nw.run(2 * time.Second)
			if preempt {
				assert.Equal(t, []string{"z"}, nw.leaders())
			} else {
				assert.Equal(t, []string{old}, nw.leaders())
				assert.Equal(t, old, z.Status().Leader.ID, "joiner learns the leader from its query")
			}
		})
	}
}

func TestPausedLeaderDoesNotActUntilListened(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 200, "b": 100, "c": 100})
	nw.run(2 * time.Second)
	require.Equal(t, []string{"a"}, nw.leaders())
	a := nw.nodes["a"]
	// a is paused: the others elect someone else meanwhile.
	nw.down["a"] = true
	nw.run(2 * time.Second)
	require.Len(t, nw.leaders(), 1)
	newLeader := nw.leaders()[0]
	nw.down["a"] = false
	assert.False(t, a.CanActAsLeader(nw.now), "overdue tick means paused")
	a.Tick(nw.now)
	assert.False(t, a.CanActAsLeader(nw.now), "re-listening after a pause")
	nw.pump()
	assert.Equal(t, election.Follower, a.Status().Role, "the rival's answer made a step down")
	assert.Equal(t, newLeader, a.Status().Leader.ID)
	assert.Equal(t, uint64(1), a.Stats().Pauses)
}

func TestQueryAnswered(t *testing.T) {
	nw := newNet(t, map[string]uint8{"a": 100, "b": 100})
	nw.run(2 * time.Second)
	lead := nw.leaders()[0]
	nw.nodes[lead].SetPayload([]byte("ledger"))
	q, err := NewNode(testConfig("q", 1, 42), nw.now)
	require.NoError(t, err)
	out := q.Ready()
	require.Len(t, out, 1)
	require.Equal(t, Query, out[0].Msg.Type)
	nw.nodes[lead].Step(nw.now, out[0].Msg)
	ans := nw.nodes[lead].Ready()
	require.Len(t, ans, 1)
	assert.Equal(t, Answer, ans[0].Msg.Type)
	assert.Equal(t, "q", ans[0].To)
	q.Step(nw.now, ans[0].Msg)
	l, term, p := q.LeaderPayload()
	assert.Equal(t, lead, l)
	assert.Equal(t, nw.nodes[lead].Status().Leader.Term, term)
	assert.Equal(t, []byte("ledger"), p)
}

func TestClientQueriesAreAnsweredButNotRemembered(t *testing.T) {
	cfg := DefaultLANConfig()
	cfg.NodeID, cfg.Cluster, cfg.Incarnation = "leader", "c", 1
	cfg.MaxPeers = 2
	cfg.Rand = rand.New(rand.NewPCG(1, 2))
	now := time.Unix(1000, 0)
	n, err := NewNode(cfg, now)
	require.NoError(t, err)
	n.Step(now, Message{Type: Query, Cluster: "c", From: "follower", Incarnation: 1, Seq: 1, Priority: 100})
	for now.Before(time.Unix(1002, 0)) && n.Status().Role != election.Leader {
		now = n.NextTick()
		n.Tick(now)
	}
	require.Equal(t, election.Leader, n.Status().Role)
	n.Ready()

	for i := range 5 {
		q := clientQuery(fmt.Sprintf("who-%d", i), uint64(i+1))
		q.Cluster, q.Priority = "c", 255
		n.Step(now, q)
	}
	answers := 0
	for _, e := range n.Ready() {
		if e.Msg.Type == Answer {
			answers++
		}
	}
	assert.Equal(t, 5, answers, "every client is answered")
	assert.Equal(t, "follower", n.successor(), "clients never displace or outrank the real follower")
}

func TestResignCarriesTheLeadersLastPayload(t *testing.T) {
	mk := func(id string) *Node {
		cfg := DefaultLANConfig()
		cfg.NodeID, cfg.Cluster, cfg.Incarnation = id, "c", 1
		cfg.Rand = rand.New(rand.NewPCG(1, uint64(len(id))))
		n, err := NewNode(cfg, time.Unix(1000, 0))
		require.NoError(t, err)
		return n
	}
	leader, follower := mk("leader"), mk("follower")
	now := time.Unix(1000, 0)
	for now.Before(time.Unix(1003, 0)) && leader.Status().Role != election.Leader {
		now = leader.NextTick()
		leader.Tick(now)
	}
	require.Equal(t, election.Leader, leader.Status().Role)
	deliver := func() {
		for _, e := range leader.Ready() {
			follower.Step(now, e.Msg)
		}
	}
	leader.SetPayload([]byte("v1"))
	leader.Tick(leader.NextTick())
	deliver()
	_, _, p := follower.LeaderPayload()
	require.Equal(t, "v1", string(p))

	// The heartbeat that would carry v2 is lost; only the RESIGN arrives.
	leader.SetPayload([]byte("v2"))
	leader.Resign(now)
	deliver()
	from, _, p := follower.LeaderPayload()
	assert.Equal(t, "leader", from)
	assert.Equal(t, "v2", string(p), "the successor holds the resigning leader's final payload")
}
