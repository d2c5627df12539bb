package udptest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// TestQuorumLeaseSurvivesWorstDrift cuts a leader off from its majority
// when its clock runs 20 % slower than every voter's (the documented
// bound, the worst case for the lease): the voters' promises run out
// early in real time, they elect a successor as soon as they may, and the
// old leader's lease must have ended first. Mutual exclusion is checked
// after every event. A lease as long as the promise fails here.
func TestQuorumLeaseSurvivesWorstDrift(t *testing.T) {
	c := quorumConfig(3)
	c.PromiseMisses = 10 // a long promise makes the drift's effect large
	for _, seed := range seeds(t, 50) {
		s := New(Options{Seed: seed, Base: c, Link: LAN}, nodeIDs(3)...)
		leader, err := elect(s, 10*time.Second)
		require.NoError(t, err, "seed %d", seed)
		for _, id := range s.IDs() {
			if id != leader {
				s.SetClockRate(id, 1.2)
			}
		}
		s.Run(time.Duration(s.Rand().Int64N(int64(c.Interval))) + c.Timings().Promise)
		s.Partition([]string{leader})
		ok := s.RunUntil(s.Now().Add(10*time.Second), func() bool { return len(s.Leaders()) == 1 && s.Leaders()[0] != leader })
		require.NoError(t, s.Err, "seed %d", seed)
		assert.True(t, ok, "seed %d: the majority elects a successor", seed)
	}
}

// TestSuspendIsAPause: a leader whose host suspends for 5 s, with a clock
// that counts the sleep (CLOCK_BOOTTIME, the udp adapter's SystemClock),
// resumes knowing it slept, like a paused process: it never acts next to
// its successor, with or without quorum.
func TestSuspendIsAPause(t *testing.T) {
	for _, quorum := range []bool{false, true} {
		c := protocol.DefaultLANConfig()
		if quorum {
			c.ClusterSize = 3
		}
		for _, seed := range seeds(t, 50) {
			s := New(Options{Seed: seed, Base: c, Link: LAN}, nodeIDs(3)...)
			leader, err := elect(s, 10*time.Second)
			require.NoError(t, err, "seed %d", seed)
			s.Run(time.Duration(s.Rand().Int64N(int64(c.Interval))))
			s.Suspend(leader, 5*time.Second, false)
			s.Run(10 * time.Second)
			require.NoError(t, s.Err, "seed %d quorum %v", seed, quorum)
			require.NoError(t, s.Converged(), "seed %d quorum %v", seed, quorum)
		}
	}
}

// TestSuspendedLeaderWakesAfterItsSuccessorDied: without quorum, a leader
// whose host slept while the others elected a successor, and which wakes
// just after that successor died, hears nobody object to its old term: the
// surviving follower knows the newer term but ignores older leaders
// without a word. Left leading, it would act on its old term (and its job
// ledger from before the sleep) until that follower, suspecting the dead
// successor, elects itself — and then beside it for a packet's delivery.
// It must step down as it wakes instead. Mutual exclusion, and no instant
// of the job started twice, are checked after every event.
func TestSuspendedLeaderWakesAfterItsSuccessorDied(t *testing.T) {
	c := protocol.DefaultLANConfig()
	for _, seed := range seeds(t, 50) {
		s := New(Options{Seed: seed, Link: LAN, Jobs: &Jobs{Every: time.Second, Gather: c.Timings().Gather, Strict: true}}, nodeIDs(3)...)
		old, err := elect(s, 10*time.Second)
		require.NoError(t, err, "seed %d", seed)
		s.Run(time.Duration(s.Rand().Int64N(int64(c.Interval))))
		oldTerm := s.Node(old).Status().Leader.Term
		sleep := 3 * time.Second
		wake := s.Now().Add(sleep)
		s.Suspend(old, sleep, false)
		_, err = waitNewLeader(s, old, sleep)
		require.NoError(t, err, "seed %d", seed)
		succ := s.Leaders()
		require.Len(t, succ, 2, "seed %d: the sleeper and its successor", seed)
		s.RunUntil(wake.Add(-time.Duration(1+s.Rand().Int64N(int64(c.Interval)))), nil)
		for _, id := range succ {
			if id != old {
				s.Crash(id)
			}
		}
		actedOld := false
		s.AfterEvent = func() {
			sn := s.nodes[old]
			if sn.up && sn.n.Status().Leader.Term == oldTerm && sn.n.CanActAsLeader(s.nodeNow(sn)) {
				actedOld = true
			}
		}
		s.Run(5 * time.Second)
		require.NoError(t, s.Err, "seed %d", seed)
		assert.False(t, actedOld, "seed %d: the woken leader may act on its old term", seed)
		assert.Equal(t, uint64(1), s.Node(old).Stats().Pauses, "seed %d", seed)
		require.NoError(t, s.Converged(), "seed %d", seed)
		assert.Greater(t, s.Node(old).Status().Leader.Term, oldTerm, "seed %d", seed)
		assert.Zero(t, s.JobStats().Duplicates, "seed %d", seed)
	}
}

// TestSuspendWithStoppedClockIsUnsafe shows the hazard the adapter's clock
// removes: with Go's monotonic clock (it stops while the host sleeps) the
// resumed leader believes no time passed and acts next to its successor.
// If this ever passes, the simulator no longer models suspend.
func TestSuspendWithStoppedClockIsUnsafe(t *testing.T) {
	c := protocol.DefaultLANConfig()
	c.ClusterSize = 3
	c.PromiseMisses = 10
	violated := 0
	for _, seed := range seeds(t, 20) {
		s := New(Options{Seed: seed, Base: c, Link: LAN}, nodeIDs(3)...)
		leader, err := elect(s, 10*time.Second)
		require.NoError(t, err, "seed %d", seed)
		s.Suspend(leader, 5*time.Second, true)
		s.Run(10 * time.Second)
		if s.Err != nil {
			violated++
		}
	}
	assert.Positive(t, violated, "a suspended leader whose clock stopped never overlapped its successor")
}

// TestSuspendWakesOnlyItsOwnSleep: a host woken early (Resume) and
// suspended again sleeps its second sleep to the end; the first sleep's
// wake-up time passing does not end it.
func TestSuspendWakesOnlyItsOwnSleep(t *testing.T) {
	s := New(Options{Seed: 1, Link: LAN}, nodeIDs(3)...)
	_, err := elect(s, 10*time.Second)
	require.NoError(t, err)
	sn := s.nodes["n01"]
	s.Suspend("n01", time.Second, false)
	s.Run(500 * time.Millisecond)
	s.Resume("n01")
	s.Run(200 * time.Millisecond)
	s.Suspend("n01", 2*time.Second, false)
	s.Run(time.Second) // past the first sleep's end
	assert.True(t, sn.asleep && sn.paused, "still in its second sleep")
	s.Run(time.Second)
	assert.False(t, sn.asleep || sn.paused, "woken when the second sleep ends")
	require.NoError(t, s.Err)
}

// TestSuspendStorm: without quorum, on a loss-free LAN, hosts suspend
// again and again — the leader in most cases, always for at least Misses
// intervals — between crashes and restarts. After every event: no node
// that slept that long while leading acts on the term it led before; and
// while the run is clean (a restart can leave no running node knowing the
// newest term), terms grow across leaders, at most one node may act as
// leader and no job instant starts twice.
func TestSuspendStorm(t *testing.T) {
	var sleeps, leaderSleeps int
	js := runStorms(t, "TestSuspendStorm", 300, func(seed uint64, trace bool) (*Sim, error) {
		s, n, l, err := suspendStorm(seed, trace)
		sleeps, leaderSleeps = sleeps+n, leaderSleeps+l
		return s, err
	})
	t.Logf("%d storms: %d suspends, %d of a leader; jobs: %v", len(seeds(t, 300)), sleeps, leaderSleeps, js)
	assert.Positive(t, leaderSleeps)
	assert.Positive(t, js.Failovers)
}

// suspendStorm runs one TestSuspendStorm scenario and returns the sim, how
// many suspends it made and how many of them were of a leader.
func suspendStorm(seed uint64, trace bool) (s *Sim, sleeps, leaderSleeps int, err error) {
	s, c, ids := stormSim(seed, 0x5a5, trace)
	suspect := c.Timings().Suspect
	slept := oldTerms{}
	s.AfterEvent = func() { slept.check(s, func(sn *simNode) bool { return sn.asleep }, "slept") }
	r := s.Rand()
	s.Run(10 * c.Interval)
	for range 20 {
		s.Run(time.Duration(r.Int64N(int64(8 * c.Interval))))
		id := ids[r.IntN(len(ids))]
		if ls := s.Leaders(); len(ls) > 0 && r.IntN(3) > 0 {
			id = ls[r.IntN(len(ls))]
		}
		back := time.Duration(r.Int64N(int64(10 * c.Interval)))
		switch k := r.IntN(5); k {
		case 0, 1, 2:
			sn := s.nodes[id]
			if sn.up && !sn.paused {
				sleeps++
				if sn.n.Status().Role == election.Leader {
					leaderSleeps++
					slept.note(sn, id)
				}
			}
			s.Suspend(id, suspect+time.Duration(r.Int64N(int64(20*c.Interval))), false)
		default:
			crashOrStop(s, id, k == 4, back)
		}
		if s.Err != nil {
			return s, sleeps, leaderSleeps, s.Err
		}
	}
	s.Run(30 * c.Interval)
	return s, sleeps, leaderSleeps, s.Err
}
