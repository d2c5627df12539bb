package udptest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuorumClusterSizeTooSmall: 5 nodes configured with ClusterSize 3
// could elect a leader on each side of a partition (2 of "3" is a
// majority). Every node hears more ids than the cluster size and nobody
// leads, before and after a partition; Quorum reports the misconfiguration.
func TestQuorumClusterSizeTooSmall(t *testing.T) {
	c := quorumConfig(3)
	for _, seed := range seeds(t, 20) {
		ids := nodeIDs(5)
		s := New(Options{Seed: seed, Base: c, Link: LAN}, ids...)
		s.Run(10 * time.Second)
		require.NoError(t, s.Err, "seed %d", seed)
		for _, id := range ids {
			q := s.Node(id).Quorum()
			assert.True(t, q.Overfull, "seed %d: %s does not notice 5 ids with cluster size 3", seed, id)
			assert.Equal(t, 5, q.Heard, "seed %d: %s", seed, id)
			assert.Equal(t, ids, q.HeardIDs)
		}
		assert.Empty(t, s.Leaders(), "seed %d: a leader despite the misconfiguration", seed)
		s.Partition(ids[:2])
		s.Run(10 * time.Second)
		require.NoError(t, s.Err, "seed %d", seed)
		assert.Empty(t, s.Leaders(), "seed %d: a leader after a partition", seed)
	}
}
