package udptest

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func quorumConfig(n int) protocol.Config {
	c := protocol.DefaultLANConfig()
	c.ClusterSize = n
	return c
}

// TestQuorumMinorityHasNoLeader partitions 5 nodes 2/3 in every way the
// leader can land: the minority side ends with no leader at all, the
// majority side with exactly one, and never two act at once (checked after
// every event in quorum mode).
func TestQuorumMinorityHasNoLeader(t *testing.T) {
	c := quorumConfig(5)
	for _, seed := range seeds(t, 100) {
		ids := nodeIDs(5)
		s := New(Options{Seed: seed, Base: c, Link: LAN}, ids...)
		_, err := elect(s, 10*time.Second)
		require.NoError(t, err, "seed %d", seed)
		perm := s.Rand().Perm(5)
		minority := []string{ids[perm[0]], ids[perm[1]]}
		s.Partition(minority)
		s.Run(3 * FailoverBound(c, LAN.MaxDelay()))
		require.NoError(t, s.Err, "seed %d", seed)
		acting := 0
		for _, id := range ids {
			st := s.Node(id).Status()
			if id == minority[0] || id == minority[1] {
				assert.NotEqual(t, election.Leader, st.Role, "seed %d: minority node %s leads", seed, id)
				assert.False(t, s.Node(id).CanActAsLeader(s.Now()))
			} else if s.Node(id).CanActAsLeader(s.Now()) {
				acting++
			}
		}
		assert.Equal(t, 1, acting, "seed %d: the majority side has one acting leader", seed)
		s.Heal()
		_, err = elect(s, 10*time.Second)
		require.NoError(t, err, "seed %d: converges after heal", seed)
	}
}

// TestQuorumFailover: a crashed leader is replaced by the majority within
// the non-quorum bound plus one promise period (voters wait out their
// promise to the dead leader).
func TestQuorumFailover(t *testing.T) {
	c := quorumConfig(3)
	bound := FailoverBound(c, LAN.MaxDelay()) + time.Duration(c.Misses)*c.Interval
	var ds []time.Duration
	for _, seed := range seeds(t, 100) {
		d, err := Failover(c, 3, LAN, seed)
		require.NoError(t, err, "seed %d", seed)
		assert.LessOrEqual(t, d, bound, "seed %d", seed)
		ds = append(ds, d)
	}
	t.Logf("quorum failover p50 %v p99 %v (bound %v)", Percentile(ds, 50), Percentile(ds, 99), bound)
}

func TestQuorumResignIsFast(t *testing.T) {
	c := quorumConfig(5)
	for _, seed := range seeds(t, 50) {
		d, err := Resign(c, 5, LAN, seed)
		require.NoError(t, err, "seed %d", seed)
		assert.LessOrEqual(t, d, ResignBound(c, LAN.MaxDelay()), "seed %d: RESIGN releases the promises", seed)
	}
}

// TestQuorumMinorityClaimsBackOff: a node cut off from the majority claims
// less and less often (Interval doubling per failed claim, at most 16
// intervals): a 10 s split costs it a handful of claims, not two per
// interval. Once the split heals it hears the leader and follows it.
func TestQuorumMinorityClaimsBackOff(t *testing.T) {
	c := quorumConfig(3)
	var most uint64
	defer func() { t.Logf("at most %d claims by the minority node in a 10 s split", most) }()
	for _, seed := range seeds(t, 20) {
		s := New(Options{Seed: seed, Base: c, Link: LAN}, nodeIDs(3)...)
		leader, err := elect(s, 10*time.Second)
		require.NoError(t, err, "seed %d", seed)
		var lone string
		for _, id := range s.IDs() {
			if id != leader {
				lone = id
				break
			}
		}
		s.Isolate(lone)
		before := s.Node(lone).Stats().ClaimsSent
		s.Run(10 * time.Second)
		require.NoError(t, s.Err, "seed %d", seed)
		claims := s.Node(lone).Stats().ClaimsSent - before
		most = max(most, claims)
		// Failures at about 1+2+4+8+16+16 intervals after the first (each
		// attempt a claim and its retransmission): 7 attempts fit in 10 s.
		assert.LessOrEqual(t, claims, uint64(16), "seed %d: claims in a 10 s split", seed)
		assert.Positive(t, claims, "seed %d: it does keep trying", seed)
		s.Heal()
		ok := s.RunUntil(s.Now().Add(c.Timings().MaxClaimBackoff+5*time.Second), func() bool {
			return s.Node(lone).Status().Leader.ID == leader
		})
		assert.True(t, ok, "seed %d: follows the leader after the heal", seed)
	}
}
