package udptest

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

var flagJobFigures = flag.Bool("sim.jobfigures", false, "measure the job rules' duplicate rates under loss (docs/benchmarks.md)")

// Quorum mode, commit before start: a leader cut off from every peer when
// an instant comes due cannot get it acknowledged, so it never starts it;
// it crashes, and the majority's new leader takes over (running the
// latest missed instant once). If the leader started before the majority held the entry
// (no commit), the instant would run twice.
func TestJobsQuorumCommitBeforeStart(t *testing.T) {
	base := protocol.DefaultLANConfig()
	base.ClusterSize = 3
	for _, seed := range seeds(t, 50) {
		s := New(Options{Seed: seed, Base: base, Link: LAN, Jobs: &Jobs{Gather: base.Timings().Gather, Strict: true}}, nodeIDs(3)...)
		l, err := elect(s, 10*time.Second)
		require.NoError(t, err, "seed %d", seed)
		next := s.start.Add(s.Elapsed().Truncate(time.Second) + time.Second)
		s.RunUntil(next.Add(-time.Millisecond), nil)
		s.Isolate(l) // the instant's heartbeat and its acks are lost
		s.RunUntil(next.Add(50*time.Millisecond), nil)
		s.Crash(l)
		s.Heal()
		s.Run(5 * time.Second)
		require.NoError(t, s.Err, "seed %d", seed)
		st := s.JobStats()
		assert.Zero(t, st.Duplicates, "seed %d", seed)
		assert.NotEqual(t, l, s.jobs.starts[s.jobs.index(s, next)], "seed %d: the isolated leader never starts it", seed)
		assert.Positive(t, st.Starts, "seed %d: the new leader runs the job", seed)
	}
}

// The measured bug, without quorum: a healthy leader starts an instant; a
// follower that misses that heartbeat and the next ones (a one-way cut)
// claims and wins; the old leader hears the new one at once and steps down.
// With gathering, its Ledger handover reaches the new leader inside the
// window and the instant is not run again; the legacy runner runs it a
// second time as a misfire.
func TestJobsGatheringStopsTheMisfireDuplicate(t *testing.T) {
	base := protocol.DefaultLANConfig()
	for _, legacy := range []bool{false, true} {
		dups := 0
		for _, seed := range seeds(t, 50) {
			s := New(Options{Seed: seed, Base: base, Link: LAN, Jobs: &Jobs{Gather: base.Timings().Gather, Legacy: legacy}}, nodeIDs(3)...)
			l, err := elect(s, 10*time.Second)
			require.NoError(t, err, "seed %d", seed)
			next := s.start.Add(s.Elapsed().Truncate(time.Second) + time.Second)
			s.RunUntil(next.Add(-time.Millisecond), nil)
			for _, id := range s.IDs() {
				if id != l {
					s.Cut(l, id) // the followers hear nothing more from l
				}
			}
			// They suspect l and elect one of them; l still hears them.
			s.RunUntil(s.Now().Add(3*time.Second), func() bool { return len(s.Leaders()) == 2 })
			s.Heal()
			s.Run(3 * time.Second)
			require.NoError(t, s.Err, "seed %d", seed)
			dups += s.JobStats().Duplicates
		}
		if legacy {
			assert.Positive(t, dups, "the legacy runner runs the instant twice")
		} else {
			assert.Zero(t, dups, "gathering: never twice")
		}
		t.Logf("legacy=%v: %d duplicates in %d runs", legacy, dups, len(seeds(t, 50)))
	}
}

// Without quorum, on a loss-free network with crashes, graceful stops,
// restarts and pauses (old and new leader can always hear each other): no
// instant is ever started twice.
func TestJobsNoQuorumCleanFaults(t *testing.T) {
	base := protocol.DefaultLANConfig()
	total := JobStats{}
	for _, seed := range seeds(t, 300) {
		ids := nodeIDs(3 + int(seed%3))
		s := New(Options{Seed: seed, Base: base, Link: LAN, Jobs: &Jobs{Gather: base.Timings().Gather, Strict: true}}, ids...)
		r := s.Rand()
		s.Run(2 * time.Second)
		for range 6 {
			id := ids[r.IntN(len(ids))]
			switch r.IntN(4) {
			case 0:
				s.Crash(id)
			case 1:
				s.Stop(id)
			case 2:
				s.Pause(id)
				s.At(s.Now().Add(time.Duration(r.Int64N(int64(time.Second)))), func() { s.Resume(id) })
			case 3:
				s.Restart(id)
			}
			s.Run(time.Duration(500+r.IntN(3000)) * time.Millisecond)
			if !s.Up(ids[0]) && !s.Up(ids[1]) {
				s.Restart(ids[0])
			}
		}
		s.Run(3 * time.Second)
		require.NoError(t, s.Err, "seed %d: replay with -sim.seed=%d -sim.trace", seed, seed)
		total.add(s.JobStats())
	}
	t.Logf("%v", total)
	assert.Positive(t, total.Failovers)
}

// TestJobsDuplicateRates measures, without quorum, how often an instant
// runs twice in 30 s episodes of 30 % random or bursty loss on 3 and 5
// nodes (an instant every second), legacy runner versus gathering. Run with
// -sim.jobfigures; figures go in docs/benchmarks.md.
func TestJobsDuplicateRates(t *testing.T) {
	if !*flagJobFigures {
		t.Skip("figures: -sim.jobfigures")
	}
	base := protocol.DefaultLANConfig()
	random := Link{Delay: 200 * time.Microsecond, Jitter: 100 * time.Microsecond, Loss: 0.3}
	bursty := Link{Delay: 200 * time.Microsecond, Jitter: 100 * time.Microsecond, Loss: 0.3,
		Burst: &GilbertElliott{GoodToBad: 0.05, BadToGood: 0.1, LossGood: 0.05, LossBad: 0.8}}
	for _, lc := range []struct {
		name string
		link Link
	}{{"random 30%", random}, {"bursty", bursty}} {
		for _, n := range []int{3, 5} {
			for _, legacy := range []bool{true, false} {
				episodes, withDup, dups, failovers, starts := 0, 0, 0, 0, 0
				for _, seed := range seeds(t, 400) {
					s := New(Options{Seed: seed, Base: base, Link: LAN, NoCheck: true,
						Jobs: &Jobs{Gather: base.Timings().Gather, Legacy: legacy}}, nodeIDs(n)...)
					if _, err := elect(s, 10*time.Second); err != nil {
						continue
					}
					s.SetLink(lc.link)
					s.Run(30 * time.Second)
					s.SetLink(LAN)
					s.Run(5 * time.Second)
					st := s.JobStats()
					episodes++
					dups += st.Duplicates
					failovers += st.Failovers
					starts += st.Starts
					if st.Duplicates > 0 {
						withDup++
					}
				}
				t.Logf("%s, %d nodes, legacy=%v: %d episodes, %d with a duplicate (%.1f%%), %d duplicates in %d starts, %d failovers",
					lc.name, n, legacy, episodes, withDup, 100*float64(withDup)/float64(episodes), dups, starts, failovers)
			}
		}
	}
}
