package udptest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRestartedVoterKeepsTheLeaderLeasing: in a 3-node quorum cluster
// whose third node cannot reach the leader, the one follower that can is
// killed and restarted at once. With a state file it acks the leader at
// once (its start-up promise is bound to that leader), so the lease never
// runs out; cold it refuses everyone for a promise period and the leader
// loses its lease. Mutual exclusion is checked after every event either
// way.
func TestRestartedVoterKeepsTheLeaderLeasing(t *testing.T) {
	for _, stateFiles := range []bool{true, false} {
		for _, seed := range seeds(t, 20) {
			ids := nodeIDs(3)
			s := New(Options{Seed: seed, Base: quorumConfig(3), Link: LAN, StateFiles: stateFiles}, ids...)
			leader, err := elect(s, 10*time.Second)
			require.NoError(t, err, "seed %d", seed)
			var v, r string
			for _, id := range ids {
				if id != leader {
					v, r = r, id
				}
			}
			s.CutBoth(leader, r)
			s.Run(2 * time.Second) // r has suspected the leader and claims in vain
			require.NoError(t, s.Err, "seed %d", seed)
			lost := s.Node(leader).Stats().LeaseLost

			s.Crash(v)
			s.Restart(v)
			s.Run(3 * time.Second)
			require.NoError(t, s.Err, "seed %d state=%v", seed, stateFiles)
			if stateFiles {
				assert.Equal(t, lost, s.Node(leader).Stats().LeaseLost, "seed %d: the leader lost its lease over a restart of its voter", seed)
				assert.Equal(t, []string{leader}, s.Leaders(), "seed %d", seed)
			} else {
				assert.Greater(t, s.Node(leader).Stats().LeaseLost, lost, "seed %d: cold, the restarted voter waits out its start-up promise", seed)
			}
		}
	}
}
