package udptest

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withInterval(iv time.Duration) protocol.Config {
	c := protocol.DefaultLANConfig()
	c.Interval = iv
	return c
}

// keepalivedP50 is keepalived's measured p50 failover (3 nodes, this kind
// of machine) at the same advert interval and 3 misses; lanleader must be
// no slower.
var keepalivedP50 = map[time.Duration]time.Duration{
	100 * time.Millisecond: 310 * time.Millisecond,
	50 * time.Millisecond:  153 * time.Millisecond,
}

func TestFailoverAfterCrashWithinBound(t *testing.T) {
	for _, iv := range []time.Duration{200 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond} {
		t.Run(iv.String(), func(t *testing.T) {
			c := withInterval(iv)
			bound := FailoverBound(c, LAN.MaxDelay())
			var ds []time.Duration
			for _, seed := range seeds(t, 100) {
				d, err := Failover(c, 3, LAN, seed)
				require.NoError(t, err, "seed %d", seed)
				assert.LessOrEqual(t, d, bound, "seed %d: failover %v above Misses×Interval+BackoffMax+ClaimWindow+delay", seed, d)
				ds = append(ds, d)
			}
			p50 := Percentile(ds, 50)
			t.Logf("interval %v: failover p50 %v p99 %v (bound %v)", iv, p50, Percentile(ds, 99), bound)
			if k, ok := keepalivedP50[iv]; ok && len(ds) >= 50 {
				assert.LessOrEqual(t, p50, k, "no slower than keepalived at equal interval")
			}
			assert.Greater(t, p50, time.Duration(c.Misses-1)*iv, "suspicion must not fire early")
		})
	}
}

func TestResignWithinBound(t *testing.T) {
	for _, iv := range []time.Duration{200 * time.Millisecond, 50 * time.Millisecond} {
		c := withInterval(iv)
		bound := ResignBound(c, LAN.MaxDelay())
		for _, seed := range seeds(t, 100) {
			d, err := Resign(c, 5, LAN, seed)
			require.NoError(t, err, "seed %d", seed)
			assert.LessOrEqual(t, d, bound, "interval %v seed %d", iv, seed)
		}
	}
}

func TestHealedPartitionOneLeaderWithinTwoIntervals(t *testing.T) {
	for _, iv := range []time.Duration{200 * time.Millisecond, 50 * time.Millisecond} {
		c := withInterval(iv)
		for _, seed := range seeds(t, 100) {
			r, err := Heal(c, 5, LAN, seed)
			require.NoError(t, err, "seed %d", seed)
			assert.LessOrEqual(t, r.Agreed, 2*iv, "interval %v seed %d", iv, seed)
			assert.LessOrEqual(t, r.OneLeader, r.Agreed)
		}
	}
}

func TestStartupStormOf50Converges(t *testing.T) {
	c := protocol.DefaultLANConfig()
	var cand uint64
	ss := seeds(t, 20)
	for _, seed := range ss {
		r, err := Storm(c, 50, c.Interval, LAN, seed)
		require.NoError(t, err, "seed %d", seed)
		assert.LessOrEqual(t, r.Candidacies, uint64(5), "seed %d: a handful of claimants, not N", seed)
		assert.LessOrEqual(t, r.Converge, FailoverBound(c, 2*LAN.MaxDelay()), "seed %d: start-up bound", seed)
		cand += r.Candidacies
	}
	t.Logf("mean candidacies per storm election: %.2f", float64(cand)/float64(len(ss)))

	// Worst case: all 50 start in the same millisecond (power returns).
	for _, seed := range ss {
		r, err := Storm(c, 50, time.Millisecond, LAN, seed)
		require.NoError(t, err, "seed %d", seed)
		assert.LessOrEqual(t, r.Candidacies, uint64(10), "seed %d: simultaneous start", seed)
		assert.LessOrEqual(t, r.Leaderships, 2, "seed %d", seed)
		assert.LessOrEqual(t, r.Converge, FailoverBound(c, 2*LAN.MaxDelay()), "seed %d: start-up bound", seed)
	}
}

func TestFailoverUnderLossUsesAdaptiveThreshold(t *testing.T) {
	c := protocol.DefaultLANConfig()
	for _, seed := range seeds(t, 10) {
		d, k, err := FailoverLossy(c, 5, 0, 0.20, 10*time.Minute, seed)
		require.NoError(t, err, "seed %d", seed)
		assert.GreaterOrEqual(t, k, 8, "20%% loss raises the threshold")
		// Survivors' deadlines: k intervals, plus a claim round that may
		// itself need repeating under loss.
		assert.LessOrEqual(t, d, time.Duration(k+2)*c.Interval+2*FailoverBound(c, LAN.MaxDelay()), "seed %d", seed)
	}
}

// TestFlapping checks the loss targets over a few simulated hours (the
// per-day figures come from cmd/simfigures): at 5 % loss the default
// config must not change leader, and the adaptive threshold must do no
// worse than a fixed one at 20 % (the probes' answers, proof of life
// between lost heartbeats, keep both near zero).
func TestFlapping(t *testing.T) {
	d := 6 * time.Hour
	if raceEnabled || testing.Short() {
		d = time.Hour
	}
	c := protocol.DefaultLANConfig()
	r, err := Flapping(c, 5, 0, 0.05, d, 1)
	require.NoError(t, err)
	assert.Zero(t, r.LeaderChanges, "5%% loss over %v: %+v", d, r)

	fixed := c
	fixed.MaxMisses = fixed.Misses
	rf, err := Flapping(fixed, 5, 0, 0.20, d, 2)
	require.NoError(t, err)
	ra, err := Flapping(c, 5, 0, 0.20, d, 2)
	require.NoError(t, err)
	assert.LessOrEqual(t, ra.LeaderChanges, rf.LeaderChanges, "adaptive %+v vs fixed %+v", ra, rf)
	assert.LessOrEqual(t, ra.PerDay(), 24.0, "20%% loss, adaptive: %+v", ra)
	t.Logf("20%% loss over %v: fixed %d changes, adaptive %d", d, rf.LeaderChanges, ra.LeaderChanges)
}
