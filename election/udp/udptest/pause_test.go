package udptest

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPausedLeaderStepsBack pauses a settled leader long enough for the
// others to elect a successor, resumes it, and checks that it never acts as
// leader beside the successor and ends up following it. The exclusion
// check after every event (clean run) is what would catch it acting.
func TestPausedLeaderStepsBack(t *testing.T) {
	c := protocol.DefaultLANConfig()
	for _, seed := range seeds(t, 100) {
		s := New(Options{Seed: seed, Link: LAN}, nodeIDs(3)...)
		old, err := elect(s, 10*time.Second)
		require.NoError(t, err)
		s.Pause(old)
		s.Run(FailoverBound(c, LAN.MaxDelay()) + time.Duration(s.Rand().Int64N(int64(5*c.Interval))))
		require.Len(t, s.Leaders(), 2, "seed %d: the paused leader still believes, a successor was elected", seed)
		s.Resume(old)
		s.Run(c.Interval)
		require.NoError(t, s.Err, "seed %d", seed)
		require.NoError(t, s.Converged(), "seed %d", seed)
		assert.Equal(t, election.Follower, s.Node(old).Status().Role, "seed %d", seed)
		assert.Equal(t, uint64(1), s.Node(old).Stats().Pauses, "seed %d", seed)
	}
}

// TestShortPauseKeepsLeadership: a pause shorter than PauseThreshold is
// not a pause, and a longer one that nobody used to elect a successor ends
// with the same leader acting again after one claim window.
func TestShortPauseKeepsLeadership(t *testing.T) {
	c := protocol.DefaultLANConfig()
	s := New(Options{Seed: 1, Link: LAN}, nodeIDs(3)...)
	old, err := elect(s, 10*time.Second)
	require.NoError(t, err)
	term := s.Node(old).Status().Leader.Term
	s.Pause(old)
	s.Run(2*c.Interval + c.Interval/10) // a tick more than PauseThreshold late; followers have not claimed
	s.Resume(old)
	assert.False(t, s.Node(old).CanActAsLeader(s.Now()), "listens first")
	s.Run(c.Timings().ClaimWindow + time.Millisecond)
	require.NoError(t, s.Err)
	assert.True(t, s.Node(old).CanActAsLeader(s.Now()))
	assert.Equal(t, term, s.Node(old).Status().Leader.Term, "no leader change")
	require.NoError(t, s.Converged())
}

// TestHarnessPartitionsAreDirected checks the one-way cut: a leader whose
// outgoing packets are cut is replaced, while it still hears the new
// leader and steps down.
func TestOneWayCutFromLeader(t *testing.T) {
	s := New(Options{Seed: 3, Link: LAN}, nodeIDs(3)...)
	old, err := elect(s, 10*time.Second)
	require.NoError(t, err)
	for _, id := range s.IDs() {
		if id != old {
			s.Cut(old, id)
		}
	}
	s.Run(2 * time.Second)
	require.NoError(t, s.Err)
	ls := s.Leaders()
	require.Len(t, ls, 1)
	assert.NotEqual(t, old, ls[0], "the deaf-muted leader hears the successor and steps down")
	assert.Equal(t, ls[0], s.Node(old).Status().Leader.ID)
}

// TestRestartedNodeDoesNotLeadWithOldTerm: the leader crashes and a
// follower restarts at once, knowing no term. The restarted node is made to
// claim first (the survivor is configured to suspect late); the survivor,
// still following, corrects its stale claim, so no leader ever has a term
// below the crashed leader's (the clean-run invariant checks every
// leadership).
func TestRestartedNodeDoesNotLeadWithOldTerm(t *testing.T) {
	c := protocol.DefaultLANConfig()
	for _, seed := range seeds(t, 200) {
		restarted := false
		s := New(Options{Seed: seed, Link: LAN, Configure: func(id string, c *protocol.Config) {
			if !restarted {
				c.Misses, c.MaxMisses = 6, 10 // the survivor suspects late
			}
		}}, nodeIDs(3)...)
		old, err := elect(s, 10*time.Second)
		require.NoError(t, err)
		oldTerm := s.Node(old).Status().Leader.Term
		var other string
		for _, id := range s.IDs() {
			if id != old {
				other = id
			}
		}
		s.Run(time.Duration(s.Rand().Int64N(int64(c.Interval))))
		s.Crash(old)
		s.Crash(other)
		restarted = true
		s.Restart(other)
		_, err = elect(s, 10*time.Second)
		require.NoError(t, err, "seed %d", seed)
		assert.Greater(t, s.Node(s.Leaders()[0]).Status().Leader.Term, oldTerm, "seed %d", seed)
	}
}
