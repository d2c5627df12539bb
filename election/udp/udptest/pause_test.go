package udptest

import (
	"fmt"
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

// TestPauseStorm: without quorum, on a loss-free LAN, processes stall
// (Pause: nothing runs, packets wait in the socket buffer) — the leader in
// most cases — for PauseThreshold to 3 × Suspect, between crashes and
// restarts; a quarter of the stalls end within an interval of Suspect, and
// in half of the longer ones a successor elected meanwhile is crashed just
// before the wake. After every event: a leader whose stall it noticed does
// not act within a claim window of its wake; one that stalled Suspect or
// more does not act on the term it led before; and while the run is clean,
// terms grow across leaders, at most one node may act as leader and no
// job instant starts twice.
func TestPauseStorm(t *testing.T) {
	var n pauseCounts
	runs := seeds(t, 180)
	js := runStorms(t, "TestPauseStorm", 180, func(seed uint64, trace bool) (*Sim, error) {
		s, c, err := pauseStorm(seed, trace)
		n.add(c)
		return s, err
	})
	t.Logf("%d storms: %v; jobs: %v", len(runs), n, js)
	if len(runs) >= 100 {
		assert.Positive(t, n.short, "no leader stall shorter than Suspect")
		assert.Positive(t, n.long, "no leader stall of Suspect or more")
		assert.Positive(t, n.succeeded, "no stalled leader was succeeded while it stalled")
		assert.Positive(t, n.crashedSuccessor, "no successor crashed before its predecessor woke")
		assert.Positive(t, js.Failovers)
	}
}

// pauseCounts are TestPauseStorm's figures: stalls drawn, of a leader
// shorter than Suspect and not, woken after a newer term led, and woken
// after a successor elected meanwhile was crashed.
type pauseCounts struct {
	pauses, leader, short, long, succeeded, crashedSuccessor int
}

func (p *pauseCounts) add(q pauseCounts) {
	p.pauses, p.leader, p.short, p.long = p.pauses+q.pauses, p.leader+q.leader, p.short+q.short, p.long+q.long
	p.succeeded, p.crashedSuccessor = p.succeeded+q.succeeded, p.crashedSuccessor+q.crashedSuccessor
}

func (p pauseCounts) String() string {
	return fmt.Sprintf("%d stalls, %d of a leader (%d shorter than Suspect, %d not); %d woke after a newer term led, %d after its successor was crashed",
		p.pauses, p.leader, p.short, p.long, p.succeeded, p.crashedSuccessor)
}

// pauseStorm runs one TestPauseStorm scenario and returns the sim and its
// figures.
func pauseStorm(seed uint64, trace bool) (s *Sim, n pauseCounts, err error) {
	s, c, ids := stormSim(seed, 0x9a05e, trace)
	tm := c.Timings()
	// listening[id]: the process that noticed a stall while leading, and
	// until when it re-listens.
	type relisten struct {
		inc   uint64
		until time.Time
	}
	stalled, listening := oldTerms{}, map[string]relisten{}
	s.AfterEvent = func() {
		stalled.check(s, func(sn *simNode) bool { return sn.paused }, "stalled")
		for id, l := range listening {
			sn := s.nodes[id]
			if !sn.up || sn.inc != l.inc || !s.now.Before(l.until) {
				delete(listening, id)
				continue
			}
			if !sn.paused && sn.n.CanActAsLeader(s.nodeNow(sn)) {
				s.fail("%s acts within a claim window of waking from a stall", id)
			}
		}
	}
	// pauses[id] counts id's stalls, so that a wake ends only its own.
	pauses := map[string]int{}
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
			var d time.Duration
			switch r.IntN(4) {
			case 0: // shorter than Suspect
				d = tm.PauseThreshold + time.Duration(r.Int64N(int64(tm.Suspect-tm.PauseThreshold)))
			case 1: // within an interval of Suspect
				d = tm.Suspect - c.Interval + time.Duration(r.Int64N(int64(2*c.Interval)))
			default: // Suspect to 3 × Suspect
				d = tm.Suspect + time.Duration(r.Int64N(int64(2*tm.Suspect)+1))
			}
			sn := s.nodes[id]
			if !sn.up || sn.paused {
				break
			}
			n.pauses++
			pauses[id]++
			gen, inc, st := pauses[id], sn.inc, sn.n.Status()
			leading, due := st.Role == election.Leader, sn.n.NextTick()
			if leading {
				n.leader++
				if d >= tm.Suspect {
					n.long++
					stalled.note(sn, id)
				} else {
					n.short++
				}
			}
			s.Pause(id)
			wake := s.Now().Add(d)
			crash := leading && d >= tm.Suspect && r.IntN(2) == 0
			crashAt := wake.Add(-time.Duration(1 + r.Int64N(int64(c.Interval))))
			crashed := false
			if crash {
				// Its successor, if one was elected, dies just before the
				// wake: nobody is left to correct the woken leader's term
				// at once.
				s.At(crashAt, func() {
					for _, o := range s.Leaders() {
						if o != id && s.nodes[o].n.Status().Leader.Term > st.Leader.Term {
							crashed = true
							s.Crash(o)
							s.At(s.Now().Add(back), func() { s.Restart(o) })
						}
					}
				})
			}
			s.At(wake, func() {
				if pauses[id] != gen || sn.inc != inc || !sn.paused {
					return // crashed, or woken and stalled again meanwhile
				}
				if leading && s.inv.maxLeaderTerm > st.Leader.Term {
					n.succeeded++
				}
				if crashed {
					n.crashedSuccessor++
				}
				// A stall the node will notice (its call comes more than
				// PauseThreshold after NextTick; a millisecond of margin).
				if leading && s.nodeNow(sn).Sub(due) > tm.PauseThreshold+time.Millisecond {
					listening[id] = relisten{inc, s.Now().Add(tm.ClaimWindow)}
				}
				s.Resume(id)
			})
		default:
			crashOrStop(s, id, k == 4, back)
		}
		if s.Err != nil {
			return s, n, s.Err
		}
	}
	s.Run(30 * c.Interval)
	return s, n, s.Err
}
