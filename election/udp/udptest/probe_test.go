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
// ProbeGrace later, its answer takes a round trip, and the best survivor
// claims at once (rankWait): one claim window, one delivery.
func probeBound(c protocol.Config, maxDelay time.Duration) time.Duration {
	return c.Interval + protocol.ProbeGrace(c.Interval) + 2*maxDelay + c.Timings().ClaimWindow + maxDelay
}

// probeP50Bound bounds the median of the same: the leader dies at a random
// phase, so its next heartbeat is due half an interval later on average
// (plus a tenth of an interval for the sampling of a few hundred seeds),
// and on a link with little jitter the probe's grace is MinProbeGrace plus
// that jitter (within a delay).
func probeP50Bound(c protocol.Config, maxDelay time.Duration) time.Duration {
	return c.Interval/2 + c.Interval/10 + protocol.MinProbeGrace + 4*maxDelay + c.Timings().ClaimWindow
}

// crashAndMeasure settles a 3-node cluster, crashes the leader at a random
// heartbeat phase (process only, or the whole host) and returns the time to
// a new leader and the survivors' stats.
func crashAndMeasure(t *testing.T, seed uint64, hostDown bool) (time.Duration, []protocol.Stats) {
	t.Helper()
	return crash(t, seed, hostDown, nodeIDs(3))
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
// host stays up and answers nothing), a follower sends MinProbes probes (on
// a loss-free link) per missed interval until it suspects, not one per
// tick.
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
	assert.Equal(t, uint64((c.Misses-1)*protocol.MinProbes), probes)
	assert.Zero(t, s.Node(f).Stats().LeaderUnreachable)
}

// TestProbeClaimsStayOrdered: followers that all learn of the dead process
// at once claim by rank, so the best one claims alone and the others yield
// to its claim: one candidacy per failover, on every seed, and a median in
// simulated time that has no backoff in it. This is the regression test of
// the probe-confirmed path (docs/benchmarks.md, "process kill").
func TestProbeClaimsStayOrdered(t *testing.T) {
	for _, nodes := range []int{3, 5} {
		for _, iv := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond} {
			c := probeBase()
			c.Interval = iv
			var ds []time.Duration
			for _, seed := range seeds(t, 300) {
				d, cand, err := FailoverKill(c, nodes, LAN, seed)
				require.NoError(t, err, "seed %d", seed)
				ds = append(ds, d)
				assert.Equal(t, uint64(1), cand, "%d nodes, %v, seed %d: candidacies", nodes, iv, seed)
				assert.LessOrEqual(t, d, probeBound(c, LAN.MaxDelay()), "%d nodes, %v, seed %d", nodes, iv, seed)
			}
			p50 := Percentile(ds, 50)
			t.Logf("%d nodes, %v: process kill p50 %v max %v", nodes, iv, p50, Percentile(ds, 100))
			if len(ds) >= 100 {
				assert.LessOrEqual(t, p50, probeP50Bound(c, LAN.MaxDelay()), "%d nodes, %v: p50", nodes, iv)
			}
		}
	}
}

// TestProbeRestartedFollowersStillRank: a follower knows the followers
// that started before it only from their presence reports to its start-up
// query. Restart every follower in turn, then kill the leader: still one
// candidacy.
func TestProbeRestartedFollowersStillRank(t *testing.T) {
	for _, seed := range seeds(t, 100) {
		s := New(Options{Seed: seed, Base: probeBase(), Link: LAN, Probes: true}, nodeIDs(4)...)
		old, err := elect(s, 5*time.Second)
		require.NoError(t, err)
		for _, id := range s.IDs() {
			if id != old {
				s.Crash(id)
				s.Restart(id)
				s.Run(probeBase().Interval)
			}
		}
		_, err = elect(s, 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, []string{old}, s.Leaders(), "seed %d", seed)
		s.Run(time.Duration(s.Rand().Int64N(int64(probeBase().Interval))))
		before := map[string]uint64{}
		for _, id := range s.IDs() {
			before[id] = s.Node(id).Stats().Elections
		}
		s.Crash(old)
		d, err := waitNewLeader(s, old, 5*time.Second)
		require.NoError(t, err, "seed %d", seed)
		var cand uint64
		for _, id := range s.IDs() {
			if id != old {
				cand += s.Node(id).Stats().Elections - before[id]
			}
		}
		assert.Equal(t, uint64(1), cand, "seed %d", seed)
		assert.LessOrEqual(t, d, probeBound(probeBase(), LAN.MaxDelay()), "seed %d", seed)
	}
}

// TestProbeBestFollowerDeadToo: when the best-ranked follower died too
// (unannounced, its host gone), the next one claims RankStep later: the
// failover still beats the detection floor, and one node leads.
func TestProbeBestFollowerDeadToo(t *testing.T) {
	c := probeBase()
	for _, seed := range seeds(t, 100) {
		s := New(Options{Seed: seed, Base: c, Link: LAN, Probes: true}, nodeIDs(4)...)
		old, err := elect(s, 5*time.Second)
		require.NoError(t, err)
		// The follower every other one ranks first: the one whose claim
		// would win.
		var best string
		var bestTerm uint64
		for _, id := range s.IDs() {
			if id == old {
				continue
			}
			if term := protocol.MakeTerm(1, c.Priority, protocol.NodeTag(id)); best == "" || term > bestTerm || (term == bestTerm && id > best) {
				best, bestTerm = id, term
			}
		}
		s.HostDown(best)
		s.Run(time.Duration(s.Rand().Int64N(int64(c.Interval))))
		s.Crash(old)
		d, err := waitNewLeader(s, old, 5*time.Second)
		require.NoError(t, err, "seed %d", seed)
		assert.LessOrEqual(t, d, probeBound(c, LAN.MaxDelay())+c.Timings().RankStep, "seed %d", seed)
		s.Run(2 * c.Interval)
		assert.Len(t, s.Leaders(), 1, "seed %d", seed)
	}
}

// TestProbeNotInQuorumMode: in quorum mode a follower's grant to its leader
// holds its claim back until about when it would suspect anyway, so it
// does not probe: the failover is the same, without the datagrams.
func TestProbeNotInQuorumMode(t *testing.T) {
	c := probeBase()
	c.ClusterSize = 3
	for _, seed := range seeds(t, 50) {
		s := New(Options{Seed: seed, Base: c, Link: LAN, Probes: true}, nodeIDs(3)...)
		old, err := elect(s, 10*time.Second)
		require.NoError(t, err)
		s.Run(time.Duration(s.Rand().Int64N(int64(c.Interval))))
		s.Crash(old)
		_, err = waitNewLeader(s, old, 10*time.Second)
		require.NoError(t, err, "seed %d", seed)
		assert.Zero(t, s.Counters.Probes, "seed %d", seed)
	}
}

// TestCrashRankedAfterGrace: a leader whose host is gone answers no probe;
// the survivors suspect when the Misses-th missed heartbeat was due, wait
// the probe grace for it and then their rank, so only the best survivor
// claims (a claim and its retransmission), a grace after the deadline
// rather than a random backoff after it.
func TestCrashRankedAfterGrace(t *testing.T) {
	for _, iv := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond} {
		c := withInterval(iv)
		var ds []time.Duration
		for _, seed := range seeds(t, 300) {
			d, claims, err := FailoverClaims(c, 3, LAN, seed)
			require.NoError(t, err, "seed %d", seed)
			ds = append(ds, d)
			assert.Equal(t, uint64(2), claims, "%v seed %d: one candidacy, its claim sent twice", iv, seed)
		}
		p50 := Percentile(ds, 50)
		bound := c.Timings().Suspect - iv/2 + iv/10 + protocol.MinProbeGrace + 4*LAN.MaxDelay() + c.Timings().ClaimWindow
		t.Logf("host down at %v: p50 %v (bound %v), max %v", iv, p50, bound, Percentile(ds, 100))
		if len(ds) >= 100 {
			assert.LessOrEqual(t, p50, bound, "%v", iv)
		}
	}
}
