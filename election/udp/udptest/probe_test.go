package udptest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

func probeBase() protocol.Config {
	c := protocol.DefaultLANConfig()
	c.Interval = 50 * time.Millisecond
	return c
}

// probeBound is the failover bound when the leader's process dies on a live
// host: the next heartbeat is due within an interval, the probe goes out a
// ProbeGrace later, its answer takes a round trip, then the usual
// backoff and claim window.
func probeBound(c protocol.Config, maxDelay time.Duration) time.Duration {
	return c.Interval + protocol.ProbeGrace(c.Interval) + 2*maxDelay + c.Timings().BackoffMax + c.Timings().ClaimWindow + maxDelay
}

// crashAndMeasure settles a 3-node cluster, crashes the leader at a random
// heartbeat phase (process only, or the whole host) and returns the time to
// a new leader and the survivors' stats.
func crashAndMeasure(t *testing.T, seed uint64, hostDown bool) (time.Duration, []protocol.Stats) {
	t.Helper()
	return crash(t, seed, hostDown, nodeIDs(3))
}

// crashAndMeasureN is crashAndMeasure's process kill with n nodes.
func crashAndMeasureN(t *testing.T, seed uint64, n int) (time.Duration, []protocol.Stats) {
	t.Helper()
	return crash(t, seed, false, nodeIDs(n))
}

func crash(t *testing.T, seed uint64, hostDown bool, ids []string) (time.Duration, []protocol.Stats) {
	t.Helper()
	s := New(Options{Seed: seed, Base: probeBase(), Link: LAN, Probes: true}, ids...)
	old, err := elect(s, 5*time.Second)
	require.NoError(t, err, "seed %d", seed)
	s.Run(time.Duration(s.Rand().Int64N(int64(probeBase().Interval))))
	if hostDown {
		s.HostDown(old)
	} else {
		s.Crash(old)
	}
	d, err := waitNewLeader(s, old, 5*time.Second)
	require.NoError(t, err, "seed %d", seed)
	var stats []protocol.Stats
	for _, id := range s.IDs() {
		if id != old {
			stats = append(stats, s.Node(id).Stats())
		}
	}
	return d, stats
}

// TestProbeProcessKillFailover: a leader whose process dies on a live host
// is replaced within one interval plus the probe's grace, backoff and claim
// window, far below the Misses×Interval floor, on every seed.
func TestProbeProcessKillFailover(t *testing.T) {
	c := probeBase()
	bound := probeBound(c, LAN.MaxDelay())
	floor := time.Duration(c.Misses-1) * c.Interval
	require.Less(t, bound, floor+c.Interval, "the bound must beat the floor, or this test shows nothing")
	var ds []time.Duration
	for seed := range uint64(300) {
		d, stats := crashAndMeasure(t, seed, false)
		ds = append(ds, d)
		assert.LessOrEqual(t, d, bound, "seed %d", seed)
		var unreachable uint64
		for _, st := range stats {
			unreachable += st.LeaderUnreachable
		}
		assert.Positive(t, unreachable, "seed %d: nobody learnt of the dead process from a probe", seed)
	}
	t.Logf("process kill at 50 ms: p50 %v, max %v (floor alone: %v..%v)", Percentile(ds, 50), Percentile(ds, 100), floor, FailoverBound(c, LAN.MaxDelay()))
}

// TestProbeHostDownKeepsFloor: a host that is gone answers no probe, so
// failover waits out the detection floor: no shortcut from silence alone.
func TestProbeHostDownKeepsFloor(t *testing.T) {
	c := probeBase()
	for seed := range uint64(100) {
		d, stats := crashAndMeasure(t, seed, true)
		// The last heartbeat left at most one interval before the crash.
		assert.GreaterOrEqual(t, d, time.Duration(c.Misses-1)*c.Interval, "seed %d", seed)
		assert.LessOrEqual(t, d, FailoverBound(c, LAN.MaxDelay()), "seed %d", seed)
		for _, st := range stats {
			assert.Zero(t, st.LeaderUnreachable, "seed %d", seed)
			assert.Positive(t, st.Probes, "seed %d: followers should have probed", seed)
		}
	}
}

// TestProbeForgedUnreachable: an "unreachable" about a live leader (a forged
// ICMP error) costs a futile claim; the leader answers it and keeps leading.
func TestProbeForgedUnreachable(t *testing.T) {
	for seed := range uint64(50) {
		s := New(Options{Seed: seed, Base: probeBase(), Link: LAN, Probes: true}, "a", "b", "c")
		old, err := elect(s, 5*time.Second)
		require.NoError(t, err)
		term := s.Node(old).Status().Leader.Term
		for _, id := range s.IDs() {
			if id != old {
				s.Unreachable(id, old, term)
			}
		}
		s.Run(2 * time.Second)
		require.NoError(t, s.Err)
		assert.Equal(t, []string{old}, s.Leaders(), "seed %d", seed)
		st := s.Node(old).Stats()
		assert.Equal(t, uint64(1), st.BecameLeader, "seed %d", seed)
		assert.Zero(t, st.SteppedDown, "seed %d", seed)
		assert.Equal(t, term, s.Node(old).Status().Leader.Term, "seed %d", seed)
	}
}

// TestProbeStaleAnswerIgnored: an answer about another leader or an older
// term (the follower moved on) changes nothing.
func TestProbeStaleAnswerIgnored(t *testing.T) {
	s := New(Options{Seed: 1, Base: probeBase(), Link: LAN, Probes: true}, "a", "b", "c")
	old, err := elect(s, 5*time.Second)
	require.NoError(t, err)
	term := s.Node(old).Status().Leader.Term
	f := "a"
	if f == old {
		f = "b"
	}
	other := "c"
	if other == old {
		other = "b"
	}
	s.Unreachable(f, old, term-1)
	s.Unreachable(f, other, term)
	st := s.Node(f).Stats()
	assert.Equal(t, uint64(2), st.ProbeStale)
	assert.Zero(t, st.LeaderUnreachable)
	assert.Equal(t, old, s.Node(f).Status().Leader.ID, "still following")
}

// TestProbeOnePerMissedInterval: while the leader is silent (paused, so its
// host stays up and answers nothing), a follower probes once per missed
// interval until it suspects, not once per tick.
func TestProbeOnePerMissedInterval(t *testing.T) {
	c := probeBase()
	s := New(Options{Seed: 3, Base: c, Link: LAN, Probes: true}, "a", "b")
	old, err := elect(s, 5*time.Second)
	require.NoError(t, err)
	f := "a"
	if f == old {
		f = "b"
	}
	before := s.Node(f).Stats().Probes
	s.Pause(old)
	s.Run(time.Duration(c.Misses)*c.Interval + c.Interval/2)
	probes := s.Node(f).Stats().Probes - before
	// Misses-1 slots lie between the first missed heartbeat and suspicion.
	assert.Equal(t, uint64(c.Misses-1), probes)
	assert.Zero(t, s.Node(f).Stats().LeaderUnreachable)
}

// TestProbeClaimsStayOrdered: followers that all learn of the dead process
// at once still back off by priority before claiming, so one claim wins
// instead of every follower claiming in the same instant.
func TestProbeClaimsStayOrdered(t *testing.T) {
	const seeds = 200
	elections := 0
	for seed := range uint64(seeds) {
		_, stats := crashAndMeasureN(t, seed, 5)
		for _, st := range stats {
			elections += int(st.Elections)
		}
	}
	t.Logf("%d elections for %d failovers", elections, seeds)
	assert.LessOrEqual(t, elections, seeds*3/2, "followers claimed together")
}
