package udp_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

var errDiskFull = errors.New("state file /var/lib/lanleader/state: no space left on device")

// Issue 22, item 6: a follower whose disk is full cannot keep the ledger a
// heartbeat carries; it must not acknowledge that heartbeat, or the leader
// counts on a copy that a restart loses. With both followers' disks full
// the leader commits nothing; once one can save again, it saves the
// payload (passed again, though unchanged) and acks, and a commit goes
// through.
func TestFollowerAcksOnlyAPayloadItKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var version atomic.Int64
		full := make([]atomic.Bool, 4)
		kept := make([]atomic.Value, 4)
		c := &cluster{t: t, net: memnet.New(memnet.WithSeed(1)),
			payload: func() []byte { return fmt.Appendf(nil, "ledger v%d", version.Load()) },
			config: func(i int, cfg *udp.Config) {
				cfg.Protocol.ClusterSize = 3
				cfg.OnPayload = func(h protocol.PeerPayload) error {
					if full[i].Load() {
						return errDiskFull
					}
					kept[i].Store(string(h.Payload))
					return nil
				}
			}}
		for i := 1; i <= 3; i++ {
			c.start(i)
		}
		defer c.stopAll()
		advance(3 * time.Second)
		ls := c.leaders()
		require.Len(t, ls, 1)
		for i, nd := range c.nodes {
			full[i+1].Store(nd != ls[0])
		}
		version.Store(1)
		assert.ErrorIs(t, ls[0].elector.Commit(t.Context()), udp.ErrNotCommitted, "committed a ledger no follower could keep")

		freed := 1
		if c.nodes[0] == ls[0] {
			freed = 2
		}
		full[freed].Store(false) // space freed on one follower
		// Unacked, the leader may have lost its lease meanwhile: whoever
		// leads now commits, with the freed follower's ack.
		advance(3 * time.Second)
		ls = c.leaders()
		require.Len(t, ls, 1)
		require.NoError(t, ls[0].elector.Commit(t.Context()), "kept and acked by a majority again")
		for i, nd := range c.nodes {
			if nd != ls[0] && !full[i+1].Load() {
				assert.Equal(t, "ledger v1", kept[i+1].Load(), "%s kept what it acked", nd.id)
			}
		}
	})
}
