package udp_test

import (
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// Only a packet the node accepted (authenticated, of its cluster, not a
// replay) may teach where a node's directed messages go. A captured
// heartbeat of the leader replayed from another host, a packet of another
// cluster and one with a bad MAC, all naming the leader as sender, leave
// the follower's reply address for the leader where the leader is; a
// fresh, signed packet from the same host teaches its own sender's
// address (the table does learn).
func TestOnlyAcceptedPacketsTeachReplyAddresses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kr := keyring(t, 1)
		c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), keyring: kr}
		c.start(1)
		c.start(2)
		defer c.stopAll()
		host := netip.MustParseAddrPort("198.18.0.66:7483")
		tap := c.net.Join(host) // another host on the LAN: captures, replays
		defer tap.Close()
		advance(2 * time.Second)
		ls := c.leaders()
		require.Len(t, ls, 1)
		l := ls[0]
		f := c.nodes[0]
		if f == l {
			f = c.nodes[1]
		}
		addr, ok := f.elector.ReplyAddr(l.id)
		require.True(t, ok)
		require.Equal(t, l.addr, addr)

		var captured []byte
		var last protocol.Message
		for len(tap.Packets()) > 0 {
			p := <-tap.Packets()
			m, err := wire.Decode(p.Data, kr)
			require.NoError(t, err)
			if m.Type == protocol.Heartbeat && m.From == l.id {
				captured, last = p.Data, m
			}
		}
		require.NotNil(t, captured, "the tap heard the leader's heartbeats")

		foreign := last
		foreign.Cluster, foreign.Seq = "other", last.Seq+1000
		foreignB, err := wire.Encode(foreign, kr)
		require.NoError(t, err)
		badMAC := append([]byte(nil), captured...)
		badMAC[len(badMAC)-1] ^= 1
		for _, tc := range []struct {
			name, result string
			b            []byte
		}{
			{"replayed heartbeat", "heartbeat/" + string(protocol.DropStaleSeq), captured},
			{"another cluster's packet", "heartbeat/" + string(protocol.DropOtherCluster), foreignB},
			{"bad MAC", "unknown/bad_mac", badMAC},
		} {
			before := f.count(tc.result)
			require.NoError(t, tap.SendTo(tc.b, f.addr))
			synctest.Wait()
			require.Equal(t, before+1, f.count(tc.result), "%s: dropped", tc.name)
			addr, _ := f.elector.ReplyAddr(l.id)
			assert.Equal(t, l.addr, addr, "%s from %s must not redirect replies to %s", tc.name, host, l.id)
			advance(time.Second) // the leader's own heartbeats, before the next case
			addr, _ = f.elector.ReplyAddr(l.id)
			require.Equal(t, l.addr, addr)
		}

		fresh := protocol.Message{Type: protocol.Query, Cluster: "test", From: "n9", Incarnation: 1, Seq: 1,
			Flags: protocol.FlagReport}
		b, err := wire.Encode(fresh, kr)
		require.NoError(t, err)
		require.NoError(t, tap.SendTo(b, f.addr))
		synctest.Wait()
		addr, ok = f.elector.ReplyAddr("n9")
		assert.True(t, ok, "an accepted packet teaches its sender's address")
		assert.Equal(t, host, addr)
	})
}

// count returns how many packets OnPacket reported as key ("type/result").
func (nd *node) count(key string) int {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.packets[key]
}
