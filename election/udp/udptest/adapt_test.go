package udptest

import (
	"fmt"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// TestQuorumAdaptivePromise: the promise each voter grants adapts to the
// loss it measures (protocol/quorum_promise.go), both ways, while the
// cluster runs: loss rises to 20 % (promises grow to their longest at
// once) and falls back to none (promises step down over the next minutes,
// as the estimate decays). The adversary strikes exactly where an adaptive
// promise can go wrong: whenever a voter's promise changes, the leader is
// cut off (a successor needs that voter while what it promised before may
// still hold the old leader's lease), and now and then that voter is
// crashed and restarted at once (with a state file in half the seeds, so
// it must keep the longer promise it made; without, its start-up promise
// must cover it). After every event at most one node may act as leader,
// cut-off and restarted ones included; afterwards the cluster converges.
// The 3 voters are two servers and a witness.
func TestQuorumAdaptivePromise(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d voters", n), func(t *testing.T) {
			var rose, fell int
			for _, seed := range seeds(t, 10) {
				s, r, f, err := adaptivePromise(seed, n, *flagTrace && *flagSeed != 0)
				if *flagTrace && *flagSeed != 0 {
					t.Log("\n" + s.Trace())
				}
				if err != nil {
					rs, _, _, rerr := adaptivePromise(seed, n, true)
					t.Fatalf("seed %d: %v\nreplay: go test ./election/udp/udptest -run 'TestQuorumAdaptivePromise/%d' -sim.seed=%d -sim.trace -v\nreplayed: %v\ntrace (last lines):\n%s",
						seed, err, n, seed, rerr, tail(rs.Trace(), 150))
				}
				rose, fell = rose+r, fell+f
			}
			if *flagSeed == 0 && (rose == 0 || fell == 0) {
				t.Errorf("promises rose %d and fell %d times: the test exercises no adaptation", rose, fell)
			}
			t.Logf("promise changes under attack: %d rises, %d falls", rose, fell)
		})
	}
}

// adaptivePromise runs one TestQuorumAdaptivePromise scenario; it returns
// how many promise rises and falls the adversary struck at.
func adaptivePromise(seed uint64, nodes int, trace bool) (s *Sim, rose, fell int, err error) {
	ids := nodeIDs(nodes)
	base := protocol.DefaultLANConfig()
	base.ClusterSize = nodes
	stateFiles := seed%2 == 0
	// Three nodes are two servers and a witness, the setup for two
	// machines (docs/operations.md, "Two servers").
	witness := nodes == 3
	s = New(Options{Seed: seed, Base: base, Link: LAN, Trace: trace, StateFiles: stateFiles,
		Configure: func(id string, c *protocol.Config) { c.Witness = witness && id == ids[nodes-1] }}, ids...)
	s.logf("adaptive promise, %d nodes, state files %v", nodes, stateFiles)
	tm := base.Timings()
	r := s.Rand()
	if _, err := elect(s, 30*time.Second); err != nil {
		return s, 0, 0, err
	}
	promise := map[string]time.Duration{}
	var cutUntil time.Time
	s.AfterEvent = func() {
		for _, id := range ids {
			if !s.Up(id) {
				continue
			}
			p := s.Node(id).Quorum().Promise
			old, seen := promise[id]
			promise[id] = p
			if !seen || p == old || s.Now().Before(cutUntil) {
				continue
			}
			ls := s.Leaders()
			if len(ls) != 1 || ls[0] == id {
				continue
			}
			l := ls[0]
			cutUntil = s.Now().Add(2*tm.MaxPromise + 5*tm.Interval)
			if p > old {
				// A longer promise was just granted: restart the voter at
				// once, with a fresh loss estimate and so the shortest
				// promise, and cut the leader off once it has acked again.
				rose++
				cutAt := s.Now().Add(time.Duration(r.Int64N(int64(3 * tm.Interval))))
				s.logf("%s promise %v -> %v: restart it, cut off leader %s at %v", id, old, p, l, cutAt.Sub(s.start))
				s.At(s.Now(), func() {
					s.Crash(id)
					s.Restart(id)
				})
				s.At(cutAt, func() { s.Isolate(l) })
			} else {
				fell++
				s.logf("%s promise %v -> %v: cut off leader %s", id, old, p, l)
				s.At(s.Now(), func() { s.Isolate(l) })
			}
			s.At(cutUntil, s.Heal)
		}
	}
	lossy := LAN
	lossy.Loss = 0.20
	s.SetLink(lossy)
	s.Run(time.Duration(60+r.IntN(120)) * time.Second)
	s.SetLink(LAN)
	s.Run(10 * time.Minute)
	s.AfterEvent = nil
	if s.Err != nil {
		return s, rose, fell, s.Err
	}
	s.Heal()
	if _, err := elect(s, settleBound(base)+2*tm.MaxPromise); err != nil {
		return s, rose, fell, err
	}
	return s, rose, fell, nil
}
