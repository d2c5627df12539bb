package udp_test

import (
	"bytes"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// logBuffer is a node's log, safe for the run loop and the test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the log lines containing every one of subs.
func (b *logBuffer) lines(subs ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(b.buf.String(), "\n") {
		ok := l != ""
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

func keyring(t *testing.T, b byte) *wire.Keyring {
	k, err := wire.NewKeyring(bytes.Repeat([]byte{b}, wire.MinKeyLen))
	require.NoError(t, err)
	return k
}

// Issue 10: two nodes with different keys, or one without a key, used to
// both lead with nothing but a metric to show it. Each side now names the
// other's address at WARN with the likely cause, once per 10 s.
func TestAuthMismatchWarnsOnBothSides(t *testing.T) {
	for _, tc := range []struct {
		name         string
		k1, k2       byte // 0: no key
		warn1, warn2 string
	}{
		{"different keys", 1, 2, "reason=bad_mac", "reason=bad_mac"},
		{"one side unsigned", 1, 0, "reason=unsigned", "reason=signed_without_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), keyFor: func(i int) *wire.Keyring {
					if b := []byte{tc.k1, tc.k2}[i-1]; b != 0 {
						return keyring(t, b)
					}
					return nil
				}}
				n1, n2 := c.start(1), c.start(2)
				defer c.stopAll()
				advance(5 * time.Second)
				w1 := n1.logs.lines("level=WARN", tc.warn1, "from="+n2.addr.String())
				w2 := n2.logs.lines("level=WARN", tc.warn2, "from="+n1.addr.String())
				assert.NotEmpty(t, w1, "n1 names n2's address")
				assert.NotEmpty(t, w2, "n2 names n1's address")
				assert.LessOrEqual(t, len(w1), 1, "rate-limited: one line per address per 10 s")
				assert.LessOrEqual(t, len(w2), 1)
				if len(w1) > 0 {
					assert.Contains(t, w1[0], "cause=")
				}
			})
		})
	}
}

// Issue 10: two processes with one node id used to both lead with the same
// term. The one that started first keeps leading; the other logs ERROR
// naming its address and never leads while it hears it.
func TestDuplicateNodeIDOneLeaderAndAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dupOf string
		c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), idFor: func(i int) string {
			if i == 3 {
				return dupOf // a second process with the leader's id
			}
			return []string{"", "n1", "n2"}[i]
		}}
		c.start(1)
		c.start(2)
		defer c.stopAll()
		advance(2 * time.Second)
		ls := c.leaders()
		require.Len(t, ls, 1)
		first := ls[0]
		dupOf = first.id
		term := first.elector.Status().Leader.Term
		dup := c.start(3)
		for range 50 {
			advance(100 * time.Millisecond)
			assert.NotEqual(t, election.Leader, dup.elector.Status().Role, "the newer n1 never leads")
		}
		assert.Equal(t, election.Leader, first.elector.Status().Role, "the n1 that was there first keeps leading")
		assert.Equal(t, term, first.elector.Status().Leader.Term)
		assert.NotEmpty(t, dup.logs.lines("level=ERROR", "another process uses this node id", "addr="+first.addr.String()))
		assert.NotEmpty(t, first.logs.lines("level=ERROR", "another process uses this node id", "addr="+dup.addr.String()))

		// The first one crashes: the duplicate still must not lead until it
		// has stopped hearing the first for a while — and the cluster has
		// exactly one leader throughout.
		c.crash(first)
		for range 100 {
			advance(100 * time.Millisecond)
			assert.LessOrEqual(t, len(c.leaders()), 1)
		}
	})
}

// Issue 16, deaf from boot with unicast peers (no self echo): the node may
// lead alone, but every node logs WARN lines naming it and its address
// within 5 s — the rival leader, and a peer that does not hear — and it
// logs "isolated" itself; the live leader keeps leading.
func TestDeafFromBootIsReportedOnBothSides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), expectPeers: true}
		c.start(1)
		c.start(2)
		c.start(3)
		defer c.stopAll()
		advance(2 * time.Second)
		ls := c.leaders()
		require.Len(t, ls, 1)
		lead := ls[0]
		deafAddr := netip.MustParseAddrPort("198.18.0.4:7483")
		for _, nd := range c.nodes {
			c.net.Block(nd.addr, deafAddr)
		}
		deaf := c.start(4)
		advance(5 * time.Second)
		assert.Equal(t, election.Leader, lead.elector.Status().Role, "the live leader keeps leading")
		assert.NotEmpty(t, deaf.logs.lines("level=WARN", "isolated"), "the deaf node says it hears nobody")
		for _, nd := range c.nodes[:3] {
			assert.NotEmpty(t, nd.logs.lines("level=WARN", "peer does not hear the cluster", "peer=n4", "addr="+deafAddr.String()),
				"%s names the deaf node", nd.id)
			assert.Equal(t, lead.id, nd.elector.Status().Leader.ID)
		}
		if deaf.elector.Status().Role == election.Leader {
			assert.NotEmpty(t, lead.logs.lines("level=WARN", "rival leader", "rival=n4", "addr="+deafAddr.String()),
				"the leader reports the deaf node leading alone")
			assert.Equal(t, "n4", lead.elector.Hearing().Rival.ID, "and shows it in Hearing (/status)")
		}
	})
}

// Issue 22, item 5: a correctly signed packet of this node's previous
// process, captured on the LAN and replayed to the restarted node, used
// to take the duplicate-id path: the node stepped down and was barred
// from claiming for 30 intervals (one replay per 6 s kept it from ever
// leading). A previous process names no live one: the node keeps leading,
// shows no duplicate and logs no ERROR.
func TestReplayOfThisNodesPreviousProcessChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kr := keyring(t, 1)
		c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), keyring: kr}
		tap := c.net.Join(netip.MustParseAddrPort("198.18.0.66:7483"))
		defer tap.Close()
		n1 := c.start(1)
		advance(2 * time.Second)
		require.Equal(t, election.Leader, n1.elector.Status().Role)
		var captured [][]byte
		for len(tap.Packets()) > 0 {
			captured = append(captured, (<-tap.Packets()).Data)
		}
		require.NotEmpty(t, captured, "the tap heard n1's previous process")
		c.crash(n1)
		advance(time.Second)
		n1 = c.start(1) // a new process, a new incarnation
		defer c.stopAll()
		advance(2 * time.Second)
		require.Equal(t, election.Leader, n1.elector.Status().Role)

		for i := range 30 { // one replayed packet per second, each a different one
			require.NoError(t, tap.SendTo(captured[i%len(captured)], n1.addr))
			advance(time.Second)
			require.Equal(t, election.Leader, n1.elector.Status().Role, "replay %d deposed n1", i)
			assert.Zero(t, n1.elector.Hearing().Duplicate, "replay %d: no live process shares n1's id", i)
		}
		assert.Empty(t, n1.logs.lines("level=ERROR", "another process uses this node id"))
	})
}

// Issue 25 item 7: the hearing WARNs name the real cause when it is a key
// or a node id, not a firewall. Three nodes, two without a key and one
// with: the one with a key drops the others' unsigned packets and hears
// nobody; they accept its signed packets unchecked and see it not hearing
// them. And two processes with one id, alone: each hears only the other,
// whose packets are not another node's.
func TestHearingWarningsNameKeysAndDuplicateIDs(t *testing.T) {
	t.Run("one node with a key", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), expectPeers: true, keyFor: func(i int) *wire.Keyring {
				if i == 3 {
					return keyring(t, 1)
				}
				return nil
			}}
			n1, n2, n3 := c.start(1), c.start(2), c.start(3)
			defer c.stopAll()
			advance(15 * time.Second)
			for _, nd := range []*node{n1, n2} {
				ws := nd.logs.lines("level=WARN", "peer does not hear the cluster", "peer=n3")
				require.NotEmpty(t, ws, "%s notices n3 does not hear it", nd.id)
				for _, w := range ws {
					assert.Contains(t, w, "n3 uses secret_file and this node does not", "%s: %s", nd.id, w)
					assert.NotContains(t, w, "firewall", "%s: %s", nd.id, w)
				}
			}
			ws := n3.logs.lines("level=WARN", "isolated: no valid packet from any other node")
			require.NotEmpty(t, ws)
			for _, w := range ws {
				assert.Contains(t, w, "failed authentication", w)
				assert.Contains(t, w, "reason=unsigned", w)
				assert.NotContains(t, w, "inbound UDP dropped", w)
			}
		})
	})
	t.Run("different keys", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), expectPeers: true, keyFor: func(i int) *wire.Keyring {
				return keyring(t, map[bool]byte{true: 2, false: 1}[i == 3])
			}}
			c.start(1)
			c.start(2)
			n3 := c.start(3)
			defer c.stopAll()
			advance(15 * time.Second)
			ws := n3.logs.lines("level=WARN", "isolated: no valid packet from any other node")
			require.NotEmpty(t, ws)
			for _, w := range ws {
				assert.Contains(t, w, "reason=bad_mac", w)
				assert.Contains(t, w, "compare secret_file", w)
				assert.NotContains(t, w, "inbound UDP dropped", w)
			}
		})
	})
	t.Run("two processes with one id", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), expectPeers: true, idFor: func(int) string { return "n1" }}
			a := c.start(1)
			advance(2 * time.Second)
			b := c.start(2)
			defer c.stopAll()
			advance(15 * time.Second)
			for _, nd := range []*node{a, b} {
				other := map[*node]*node{a: b, b: a}[nd]
				ws := nd.logs.lines("level=WARN", "isolated: no valid packet from any other node")
				for _, w := range ws {
					if strings.Contains(w, "silent_for=2s") {
						continue // a alone before b started: nobody there
					}
					assert.Contains(t, w, "another process with this node id", w)
					assert.Contains(t, w, other.addr.String(), w)
					assert.NotContains(t, w, "inbound UDP dropped", w)
				}
				assert.LessOrEqual(t, len(ws), 3, "rate-limited: %v", ws)
			}
			assert.NotEmpty(t, b.logs.lines("level=WARN", "isolated", "another process with this node id"))
		})
	})
}
