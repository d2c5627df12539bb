package udptest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// whoQuery is what `lanleader who` sends (udp.clientQuery).
func whoQuery(cluster string, i int) protocol.Message {
	return protocol.Message{Type: protocol.Query, Cluster: cluster, From: fmt.Sprintf("who-%d", i),
		Incarnation: uint64(1000 + i), Seq: 1, Flags: protocol.FlagClient, Nonce: uint64(i + 1),
		Payload: make([]byte, protocol.ClientQueryPad)}
}

// Issue 10 point 2: a unicast ANSWER used to share the heartbeats' sequence,
// so every `who` looked like a lost heartbeat at every other follower; 60
// queries raised their threshold to 9–10 intervals and slowed failover 3×.
// Now the followers' threshold stays at Misses and failover within bound.
func TestClientQueriesDoNotSlowFailover(t *testing.T) {
	c := protocol.DefaultLANConfig()
	for _, seed := range seeds(t, 20) {
		s := New(Options{Seed: seed, Link: LAN, Base: c}, nodeIDs(3)...)
		lead, err := elect(s, 10*time.Second)
		require.NoError(t, err)
		for i := range 60 {
			s.Deliver(lead, whoQuery(c.Cluster, i))
			s.Run(c.Interval / 4)
		}
		require.Equal(t, uint64(60), s.Node(lead).Stats().Sent[protocol.Answer], "seed %d: every query answered", seed)
		for _, id := range s.IDs() {
			if id != lead {
				assert.Equal(t, c.Misses, s.Node(id).Stats().MissesThreshold, "seed %d: %s's detector saw answers as loss", seed, id)
			}
		}
		s.Crash(lead)
		d, err := waitNewLeader(s, lead, 5*time.Second)
		require.NoError(t, err)
		assert.LessOrEqual(t, d, FailoverBound(c, LAN.MaxDelay()), "seed %d", seed)
	}
}

// keepsLeading fails the test if lead stops leading, or any other node
// than the deaf one names another leader, from now on.
func keepsLeading(t *testing.T, s *Sim, lead, deaf string) {
	t.Helper()
	s.AfterEvent = func() {
		if s.Err != nil {
			return
		}
		if st := s.Node(lead).Status(); st.Role != election.Leader {
			s.fail("the live leader %s lost leadership to %q (deaf %s)", lead, st.Leader.ID, deaf)
		}
		for _, id := range s.IDs() {
			if id != lead && id != deaf {
				if l := s.Node(id).Status().Leader; l.ID != lead {
					s.fail("%s follows %q, not the live leader %s", id, l.ID, lead)
				}
			}
		}
	}
}

// deafPeerReported reports whether every node but deaf lists it in
// Hearing().DeafPeers.
func deafPeerReported(s *Sim, deaf string) bool {
	for _, id := range s.IDs() {
		if id == deaf {
			continue
		}
		found := false
		for _, p := range s.Node(id).Hearing(s.Now()).DeafPeers {
			found = found || p.ID == deaf
		}
		if !found {
			return false
		}
	}
	return true
}

// Issue 16: a follower that stops receiving (a host firewall) must not
// take over from the live leader, in any mode, and must be noticed within
// 5 s by itself and by the others.
func TestDeafFollowerDoesNotTakeOver(t *testing.T) {
	for _, mode := range []struct {
		name             string
		echo             bool
		size             int
		deafMayLeadAlone bool
	}{
		{"broadcast", true, 0, false},
		{"unicast", false, 0, true},
		{"broadcast quorum", true, 5, false},
		{"unicast quorum", false, 5, false},
	} {
		t.Run(mode.name, func(t *testing.T) {
			for _, seed := range seeds(t, 20) {
				c := protocol.DefaultLANConfig()
				c.SelfEcho, c.ClusterSize = mode.echo, mode.size
				s := New(Options{Seed: seed, Link: LAN, Base: c}, nodeIDs(5)...)
				lead, err := elect(s, 10*time.Second)
				require.NoError(t, err)
				deaf := s.IDs()[0]
				if deaf == lead {
					deaf = s.IDs()[1]
				}
				claimsBefore := s.Node(deaf).Stats().ClaimsSent
				s.Deaf(deaf)
				keepsLeading(t, s, lead, deaf)
				start := s.Now()
				noticed := s.RunUntil(start.Add(5*time.Second), func() bool {
					h := s.Node(deaf).Hearing(s.Now())
					return (h.Isolated || h.Deaf) && deafPeerReported(s, deaf)
				})
				require.NoError(t, s.Err, "seed %d", seed)
				assert.True(t, noticed, "seed %d: deaf node and its peers noticed within 5 s", seed)
				s.Run(15*time.Second - s.Now().Sub(start))
				require.NoError(t, s.Err, "seed %d", seed)
				if !mode.deafMayLeadAlone {
					assert.NotEqual(t, election.Leader, s.Node(deaf).Status().Role, "seed %d", seed)
				}
				if mode.echo {
					claims := s.Node(deaf).Stats().ClaimsSent - claimsBefore
					assert.LessOrEqual(t, claims, uint64(2*(15/3+2)), "seed %d: a deaf node claims O(1) times per several intervals", seed)
				}
				// Healed, it follows the live leader again.
				s.AfterEvent = nil
				s.Hear(deaf)
				s.Run(3 * time.Second)
				assert.NoError(t, s.Converged(), "seed %d", seed)
			}
		})
	}
}

// Deaf from boot: in broadcast mode (SelfEcho) the node notices its own
// broadcasts do not come back and never leads; with unicast peers it may
// lead alone, but nobody follows it, the live leader keeps leading, and
// both sides report it within 5 s; in quorum mode it never leads
// (invariant).
func TestDeafFromBoot(t *testing.T) {
	for _, mode := range []struct {
		name string
		echo bool
		size int
	}{{"broadcast", true, 0}, {"unicast", false, 0}, {"unicast quorum", false, 4}} {
		t.Run(mode.name, func(t *testing.T) {
			for _, seed := range seeds(t, 20) {
				c := protocol.DefaultLANConfig()
				c.SelfEcho, c.ClusterSize = mode.echo, mode.size
				s := New(Options{Seed: seed, Link: LAN, Base: c}, nodeIDs(3)...)
				lead, err := elect(s, 10*time.Second)
				require.NoError(t, err)
				s.Add("late")
				s.Deaf("late")
				keepsLeading(t, s, lead, "late")
				start := s.Now()
				noticed := s.RunUntil(start.Add(5*time.Second), func() bool {
					h := s.Node("late").Hearing(s.Now())
					return (h.Isolated || h.Deaf) && deafPeerReported(s, "late")
				})
				require.NoError(t, s.Err, "seed %d", seed)
				assert.True(t, noticed, "seed %d: noticed on both sides within 5 s", seed)
				s.Run(10 * time.Second)
				require.NoError(t, s.Err, "seed %d", seed)
				if mode.echo {
					assert.Zero(t, s.Node("late").Stats().BecameLeader, "seed %d: hears not even itself, never leads", seed)
					assert.True(t, s.Node("late").Hearing(s.Now()).Deaf, "seed %d", seed)
				}
				if !mode.echo && mode.size == 0 {
					r := s.Node(lead).Hearing(s.Now()).Rival
					assert.Equal(t, "late", r.ID, "seed %d: the leader reports the deaf node leading alone as a rival", seed)
				}
			}
		})
	}
}

// A mute leader (its packets lost, it still hears) is replaced, and steps
// down on hearing its successor although the successor shows no sign of
// hearing it: no follower reports that it still hears the old leader.
func TestMuteLeaderStepsDownToSuccessor(t *testing.T) {
	for _, seed := range seeds(t, 50) {
		s := New(Options{Seed: seed, Link: LAN}, nodeIDs(3)...)
		old, err := elect(s, 10*time.Second)
		require.NoError(t, err)
		s.Mute(old)
		_, err = waitNewLeader(s, old, 3*time.Second)
		require.NoError(t, err, "seed %d", seed)
		s.Run(2 * c200)
		assert.Len(t, s.Leaders(), 1, "seed %d: the mute leader stepped down", seed)
	}
}

const c200 = 200 * time.Millisecond

// A leader that stops receiving (SelfEcho) cannot hear a claim, a RESIGN
// or a query: it steps down once its own heartbeats have not come back
// for Misses intervals, a node that hears takes over, and the deaf one
// does not lead again while deaf.
func TestDeafLeaderStepsDown(t *testing.T) {
	for _, seed := range seeds(t, 20) {
		c := protocol.DefaultLANConfig()
		c.SelfEcho = true
		s := New(Options{Seed: seed, Link: LAN, Base: c}, nodeIDs(3)...)
		old, err := elect(s, 10*time.Second)
		require.NoError(t, err)
		s.Deaf(old)
		_, err = waitNewLeader(s, old, 3*time.Second)
		require.NoError(t, err, "seed %d: a node that hears takes over", seed)
		s.Run(5 * time.Second)
		require.NoError(t, s.Err)
		assert.Equal(t, election.Follower, s.Node(old).Status().Role, "seed %d", seed)
		assert.NotZero(t, s.Node(old).Stats().DeafStepDown, "seed %d", seed)
		assert.Len(t, s.Leaders(), 1, "seed %d", seed)
	}
}

// No false alarms: a healthy cluster, in every mode, reports nobody
// isolated, deaf, rival or duplicate — a leader without quorum included,
// whose followers tell it they hear it.
func TestHealthyClusterReportsNoHearingProblem(t *testing.T) {
	for _, mode := range []struct {
		name string
		echo bool
		size int
	}{{"broadcast", true, 0}, {"unicast", false, 0}, {"quorum", true, 3}} {
		t.Run(mode.name, func(t *testing.T) {
			c := protocol.DefaultLANConfig()
			c.SelfEcho, c.ClusterSize = mode.echo, mode.size
			s := New(Options{Seed: 1, Link: LAN, Base: c}, nodeIDs(3)...)
			_, err := elect(s, 10*time.Second)
			require.NoError(t, err)
			s.Run(10 * time.Second)
			for _, id := range s.IDs() {
				h := s.Node(id).Hearing(s.Now())
				assert.False(t, h.Isolated || h.Deaf, "%s: %+v", id, h)
				assert.Empty(t, h.DeafPeers, id)
				assert.Empty(t, h.Rival.ID, id)
				assert.Zero(t, h.Duplicate.Incarnation, id)
			}
		})
	}
}
