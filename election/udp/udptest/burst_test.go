package udptest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuorumBurstyLoss runs a 5-node quorum cluster on links that lose
// packets in bursts (Gilbert–Elliott: mean bursts of 4 deliveries at 90 %
// loss, about 9 % loss overall) with host clocks drifting within 20 %: at
// most one node may act as leader at any instant (checked after every
// event), and a leader acts most of the time.
func TestQuorumBurstyLoss(t *testing.T) {
	c := quorumConfig(5)
	c.PromiseMisses = 6 // keep leases through short bursts
	g := &GilbertElliott{GoodToBad: 0.03, BadToGood: 0.25, LossGood: 0.01, LossBad: 0.9}
	link := LAN
	link.Burst = g
	for _, seed := range seeds(t, 20) {
		s := New(Options{Seed: seed, Base: c, Link: link, Drift: 0.2}, nodeIDs(5)...)
		var acting, total int
		s.AfterEvent = func() {
			total++
			for _, id := range s.IDs() {
				if s.Node(id).CanActAsLeader(s.nodeNow(s.nodes[id])) {
					acting++
					return
				}
			}
		}
		s.Run(60 * time.Second)
		require.NoError(t, s.Err, "seed %d", seed)
		assert.Greater(t, float64(acting)/float64(total), 0.8, "seed %d: a leader acts during most events", seed)
	}
	t.Logf("mean loss %.1f %%", 100*g.MeanLoss())
}
