package udptest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// TestQuorumStallAfterFireStorm is issue 22's hole 1 as the simulator draws
// it: quorum mode, the job rules with reruns (runs of 2 s, so a failover
// often finds one going). Twenty faults per run; in three of five the leader stalls
// right after an instant fires — the heartbeat that carries it has left,
// the ACKs wait in its socket buffer — for Lease to Lease + 2 × (Promise +
// Gather + Suspect), so that a successor is often elected, gathers and
// reruns the instant meanwhile; woken, the leader reads its queue and ticks in a
// drawn order, the job rules between each. The other faults crash or stop
// a node and bring it back. After every event: at most one node may act
// as leader, paused ones included, and no instant starts twice (a rerun
// only of an instant none of whose runs completed or may still be going).
func TestQuorumStallAfterFireStorm(t *testing.T) {
	var n stallCounts
	runs := seeds(t, 200)
	js := runStorms(t, "TestQuorumStallAfterFireStorm", 200, func(seed uint64, trace bool) (*Sim, error) {
		s, c, err := stallAfterFireStorm(seed, trace)
		n.stalls, n.rerun = n.stalls+c.stalls, n.rerun+c.rerun
		return s, err
	})
	t.Logf("%d storms: %d stalls right after an instant fired, %d woke after a successor reran it; jobs: %v",
		len(runs), n.stalls, n.rerun, js)
	if len(runs) >= 100 {
		assert.Positive(t, n.rerun, "no stalled leader woke after its instant was rerun")
	}
}

// stallCounts are TestQuorumStallAfterFireStorm's figures: leader stalls
// drawn, and of those, stalls during which a rerun started.
type stallCounts struct{ stalls, rerun int }

// stallAfterFireStorm runs one TestQuorumStallAfterFireStorm scenario.
func stallAfterFireStorm(seed uint64, trace bool) (s *Sim, n stallCounts, err error) {
	shape := New(Options{Seed: seed ^ 0x57a11}).Rand()
	c := protocol.DefaultLANConfig()
	if shape.IntN(3) == 0 {
		c.Interval = 50 * time.Millisecond
	}
	c.SelfEcho = shape.IntN(2) == 0
	ids := nodeIDs(3 + 2*shape.IntN(2))
	c.ClusterSize = len(ids)
	tm := c.Timings()
	jobs := &Jobs{Every: time.Duration(1+shape.IntN(3)) * time.Second, Gather: tm.Gather, Strict: true, Rerun: true, RunFor: 2 * time.Second, StopSlowly: *flagHolds, Reruns: *flagReruns}
	s = New(Options{Seed: seed, Base: c, Link: LAN, Trace: trace, Jobs: jobs, StateFiles: shape.IntN(2) == 0}, ids...)
	r := s.Rand()
	s.Run(10 * c.Interval)
	for range 20 {
		s.Run(time.Duration(r.Int64N(int64(8 * c.Interval))))
		if s.Err != nil {
			return s, n, s.Err
		}
		id := ids[r.IntN(len(ids))]
		back := time.Duration(r.Int64N(int64(10 * c.Interval)))
		switch k := r.IntN(5); k {
		case 0, 1, 2:
			d := tm.Lease + time.Duration(r.Int64N(int64(2*(tm.Promise+tm.Gather+tm.Suspect))))
			// Before the first ACK of the instant's heartbeat is back.
			gap := time.Duration(r.Int64N(int64(LAN.Delay)))
			if stallAfterFire(s, d, gap) {
				n.stalls++
				reruns := s.jobs.stats.Reruns
				s.Run(d)
				if s.jobs.stats.Reruns > reruns {
					n.rerun++
				}
			}
		default:
			crashOrStop(s, id, k == 4, back)
		}
	}
	s.Run(30 * c.Interval)
	if s.Err != nil {
		return s, n, s.Err
	}
	// Settled: the runs the faults cut short are concluded, and their
	// reruns made or skipped with a reason.
	s.Run(tm.Gather + tm.Hold + 3*time.Second + 3*jobs.Every + jobs.RunFor)
	if s.Err != nil {
		return s, n, s.Err
	}
	if err := s.Converged(); err != nil {
		return s, n, fmt.Errorf("not converged after the storm: %v", err)
	}
	return s, n, s.CheckJobConclusions(2 * jobs.Every)
}

// stallAfterFire waits for the next instant of the job; if a node
// may act as leader when it fires, it stalls that node gap later, for d,
// and reports true.
func stallAfterFire(s *Sim, d, gap time.Duration) bool {
	m := s.jobs
	fire := s.start.Add(time.Duration(m.index(s, s.now)+1) * m.cfg.Every)
	l := ""
	s.At(fire, func() { // the job core decides as this event ends
		for _, id := range s.ids {
			if sn := s.nodes[id]; sn.up && !sn.paused && sn.n.CanActAsLeader(s.nodeNow(sn)) {
				l = id
			}
		}
	})
	s.RunUntil(fire.Add(gap), nil)
	if l == "" || s.Err != nil {
		return false
	}
	sn := s.nodes[l]
	if !sn.up || sn.stalled() {
		return false
	}
	s.Pause(l)
	inc := sn.inc
	s.At(s.now.Add(d), func() {
		if sn.inc == inc {
			s.Resume(l)
		}
	})
	return true
}

// TestWakeDrawsTheTickAnywhereInTheQueue pins what lets the simulator
// draw issue 22's hole 1: a node resumed from a stall handles what queued
// in its socket buffer and its overdue tick one event each, with the tick
// drawn at any place among them — first, last and between — as a real
// process's packet goroutine may read any number of queued packets before
// its timer goroutine ticks.
func TestWakeDrawsTheTickAnywhereInTheQueue(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 60; seed++ {
		s := New(Options{Seed: seed, Link: LAN}, nodeIDs(3)...)
		leader, err := elect(s, 10*time.Second)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		follower := s.ids[0]
		if follower == leader {
			follower = s.ids[1]
		}
		sn := s.nodes[follower]
		s.Pause(follower)
		s.Run(time.Second)
		queued := len(sn.buffered)
		if queued < 2 {
			t.Fatalf("seed %d: %d deliveries queued in a second of stall", seed, queued)
		}
		s.Resume(follower)
		at := 0 // the tick was handled first, in Resume itself
		for i, w := range sn.waking {
			if w.tick {
				at = i + 1
			}
		}
		switch at {
		case 0:
			seen["first"] = true
		case queued:
			seen["last"] = true
		default:
			seen["between"] = true
		}
	}
	assert.Equal(t, map[string]bool{"first": true, "between": true, "last": true}, seen)
}
