package udp_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
)

// Issue 25 item 3: a node whose wall clock is off by 5 s is named at WARN
// with its offset within 10 s, in quorum mode and without: a follower by
// its leader; the leader by itself, since every follower is off the same
// way by its measure (it names each of them too). The offsets show in
// ClockOffsets (/status, the page, the metric) on the leader. Nodes whose
// clocks agree name nobody, and followers measure nobody.
func TestClockOffsetOfANodeIsNamedWithin10s(t *testing.T) {
	for _, tc := range []struct {
		name        string
		clusterSize int
		offLeader   bool
	}{
		{"a follower off", 0, false},
		{"the leader off", 0, true},
		{"a follower off, quorum", 3, false},
		{"the leader off, quorum", 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				off := 0 // the node whose clock is 5 s ahead
				c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), config: func(i int, cfg *udp.Config) {
					cfg.Protocol.ClusterSize = tc.clusterSize
					cfg.Protocol.Priority = uint8(200 - i) // n1 leads
					if i == off {
						cfg.Wall = func() time.Time { return time.Now().Add(5 * time.Second) }
					}
				}}
				off = 3
				if tc.offLeader {
					off = 1
				}
				for i := 1; i <= 3; i++ {
					c.start(i)
				}
				defer c.stopAll()
				advance(10 * time.Second)
				require.Equal(t, "n1", c.nodes[0].elector.Status().Leader.ID)
				offID := c.nodes[off-1].id
				for _, nd := range c.nodes {
					ws := nd.logs.lines("level=WARN", "clock offset over the bound")
					switch {
					case nd.id == "n1" && tc.offLeader:
						require.Len(t, ws, 3, "the leader off names both followers and itself: %v", ws)
						all := strings.Join(ws, "\n")
						assert.Contains(t, all, "peer=n2 offset=-5s")
						assert.Contains(t, all, "peer=n3 offset=-5s")
						assert.Contains(t, all, `msg="clock offset over the bound: this node's wall clock differs from every follower's, the same way" offset=5s followers=2`)
					case nd.id == "n1":
						require.Len(t, ws, 1, "the leader names %s: %v", offID, ws)
						assert.Contains(t, ws[0], "peer="+offID+" offset=5s", ws[0])
						assert.Contains(t, ws[0], "round_trip=")
					default:
						assert.Empty(t, ws, "%s: a follower measures nobody", nd.id)
					}
				}
				lead := c.nodes[0].elector.ClockOffsets()
				require.Len(t, lead, 2, "the leader measures both followers")
				for _, o := range lead {
					want := time.Duration(0)
					switch {
					case tc.offLeader:
						want = -5 * time.Second
					case o.Node == offID:
						want = 5 * time.Second
					}
					assert.InDelta(t, float64(want), float64(o.Offset), float64(time.Millisecond), "%s", o.Node)
					assert.Equal(t, want != 0, o.Over)
				}
				assert.Empty(t, c.nodes[1].elector.ClockOffsets(), "a follower measures nobody")
			})
		})
	}
}

// The leader's measurement is corrected by half the round trip: on a link
// with 40 ms each way, a follower whose clock agrees shows an offset of
// about 0 (not -40 ms), whatever the loss.
func TestClockOffsetAcrossDelayAndLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)), config: func(i int, cfg *udp.Config) {
			cfg.Protocol.Priority = uint8(200 - i)
		}}
		c.net.SetDelay(40 * time.Millisecond)
		c.net.SetLoss(0.2)
		for i := 1; i <= 3; i++ {
			c.start(i)
		}
		defer c.stopAll()
		advance(20 * time.Second)
		os := c.nodes[0].elector.ClockOffsets()
		require.Len(t, os, 2)
		for _, o := range os {
			assert.InDelta(t, 0, float64(o.Offset), float64(time.Millisecond), "%s: %v", o.Node, o.Offset)
			assert.InDelta(t, float64(80*time.Millisecond), float64(o.RoundTrip), float64(time.Millisecond))
		}
		for _, nd := range c.nodes {
			assert.Empty(t, nd.logs.lines("clock offset"), "%s", nd.id)
		}
	})
}
