package udptest

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// The storms (TestSuspendStorm, TestPauseStorm) share their cluster, their
// driver and the check that a leader taken out for Suspect or more never
// acts again on the term it led.

// stormSim returns a storm's simulation of seed: 2-5 nodes without quorum
// on a loss-free LAN, at 200 ms or 50 ms, self echo and probes drawn, the
// job rules on. salt sets the storm's own draw of that shape.
func stormSim(seed, salt uint64, trace bool) (s *Sim, c protocol.Config, ids []string) {
	shape := New(Options{Seed: seed ^ salt}).Rand()
	c = protocol.DefaultLANConfig()
	if shape.IntN(3) == 0 {
		c.Interval = 50 * time.Millisecond
	}
	c.SelfEcho = shape.IntN(2) == 0
	ids = nodeIDs(2 + shape.IntN(4))
	jobs := &Jobs{Every: time.Duration(1+shape.IntN(3)) * time.Second, Gather: c.Timings().Gather, Strict: true}
	s = New(Options{Seed: seed, Base: c, Link: LAN, Trace: trace, Probes: shape.IntN(2) == 0, Jobs: jobs}, ids...)
	return s, c, ids
}

// runStorms runs storm over the test's seeds (runs unless -sim.seed), fails
// the test with a replay command and a trace at the first error, and
// returns the job rules' totals.
func runStorms(t *testing.T, name string, runs int, storm func(seed uint64, trace bool) (*Sim, error)) JobStats {
	t.Helper()
	var js JobStats
	for _, seed := range seeds(t, runs) {
		s, err := storm(seed, *flagTrace && *flagSeed != 0)
		js.add(s.JobStats())
		if err != nil {
			rs, rerr := storm(seed, true)
			t.Fatalf("seed %d: %v\nreplay: go test ./election/udp/udptest -run '%s$' -sim.seed=%d -sim.trace -v\nreplayed: %v\ntrace (last lines):\n%s",
				seed, err, name, seed, rerr, tail(rs.Trace(), 150))
		}
		if *flagTrace && *flagSeed != 0 {
			t.Log("\n" + s.Trace())
		}
	}
	return js
}

// oldTerms holds, per node, the term it led and its process when it was
// taken out (suspended, stalled) for Suspect or more, until that process
// ends or leads anew; check fails the run if such a node acts on that
// term again.
type oldTerms map[string]struct{ term, inc uint64 }

// note records that id, leading, is taken out now.
func (o oldTerms) note(sn *simNode, id string) {
	o[id] = struct{ term, inc uint64 }{sn.n.Status().Leader.Term, sn.inc}
}

// check is for Sim.AfterEvent; out reports whether a node is still taken
// out (it cannot act then), what names it in the failure.
func (o oldTerms) check(s *Sim, out func(*simNode) bool, what string) {
	for id, z := range o {
		sn := s.nodes[id]
		st := sn.n.Status()
		if !sn.up || sn.inc != z.inc || st.Role == election.Leader && st.Leader.Term != z.term {
			delete(o, id)
			continue
		}
		if st.Role == election.Leader && !out(sn) && sn.n.CanActAsLeader(s.nodeNow(sn)) {
			s.fail("%s acts on term %x, which it led before it %s", id, z.term, what)
		}
	}
}

// crashOrStop crashes id (stop false) or stops it gracefully, and restarts
// it back later.
func crashOrStop(s *Sim, id string, stop bool, back time.Duration) {
	if stop {
		s.Stop(id)
	} else {
		s.Crash(id)
	}
	s.At(s.Now().Add(back), func() { s.Restart(id) })
}
