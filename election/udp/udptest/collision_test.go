package udptest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Two node ids whose 16-bit tags collide: at equal priority they claim
// identical terms in the same round.
var collidingIDs = []string{"node-267", "node-322"}

// TestTagCollisionOneLeaderPerTerm runs the two colliding nodes with a
// third, all at one priority, through start-up storms, crashes and
// restarts, with and without quorum: never two leaders of one term (the
// invariant checked after every event), and in quorum mode never two
// acting at once. Nodes start together so both colliders claim in the same
// round.
func TestTagCollisionOneLeaderPerTerm(t *testing.T) {
	require.Equal(t, protocol.NodeTag(collidingIDs[0]), protocol.NodeTag(collidingIDs[1]))
	ids := append([]string{"voter"}, collidingIDs...)
	for _, quorum := range []bool{false, true} {
		c := protocol.DefaultLANConfig()
		if quorum {
			c.ClusterSize = 3
		}
		wins := map[string]int{}
		for _, seed := range seeds(t, 100) {
			s := New(Options{Seed: seed, Base: c, Link: LAN}, ids...)
			for range 4 {
				leader, err := elect(s, 10*time.Second)
				require.NoError(t, err, "seed %d quorum %v", seed, quorum)
				wins[leader]++
				s.Crash(leader)
				s.Run(time.Duration(s.Rand().Int64N(int64(2 * c.Interval))))
				s.Restart(leader)
			}
			require.NoError(t, s.Err, "seed %d quorum %v", seed, quorum)
		}
		t.Logf("quorum %v: leaderships %v", quorum, wins)
		assert.Positive(t, wins[collidingIDs[0]]+wins[collidingIDs[1]], "the colliders do lead")
	}
}

// TestTagCollisionVoterVotesOnce: the two colliding nodes cannot hear each
// other but both reach the voter, and claim the same term at the same
// instant (no backoff spread). The voter must vote for one of them only,
// or both lead the same term.
func TestTagCollisionVoterVotesOnce(t *testing.T) {
	c := quorumConfig(3)
	c.BackoffMax = time.Nanosecond // both claim at the same instant
	ids := append([]string{"voter"}, collidingIDs...)
	for _, seed := range seeds(t, 50) {
		s := New(Options{Seed: seed, Base: c, Link: LAN, Configure: func(id string, pc *protocol.Config) {
			if id == "voter" {
				pc.Priority = 50 // its own claim loses to theirs
			}
		}}, ids...)
		s.CutBoth(collidingIDs[0], collidingIDs[1])
		s.Run(5 * time.Second)
		require.NoError(t, s.Err, "seed %d", seed)
		assert.Len(t, s.Leaders(), 1, "seed %d", seed)
	}
}
