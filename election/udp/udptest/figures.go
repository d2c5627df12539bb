package udptest

import (
	"fmt"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// The functions in this file measure the figures docs/benchmarks.md reports
// and the tests assert. Each runs seeded simulations only.

// Percentile returns the p-th percentile (0..100) of ds (nearest rank).
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func nodeIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%02d", i)
	}
	return ids
}

// elect runs s until one leader is agreed, or returns an error.
func elect(s *Sim, within time.Duration) (string, error) {
	if !s.RunUntil(s.Now().Add(within), func() bool { return s.Converged() == nil }) {
		if s.Err != nil {
			return "", s.Err
		}
		return "", fmt.Errorf("no leader after %v: %v", within, s.Converged())
	}
	return s.Leaders()[0], nil
}

// waitNewLeader runs until a node other than old becomes leader.
func waitNewLeader(s *Sim, old string, within time.Duration) (time.Duration, error) {
	start := s.Now()
	var at time.Time
	s.OnLeader = func(id string, _ uint64, t time.Time) {
		if id != old && at.IsZero() {
			at = t
		}
	}
	defer func() { s.OnLeader = nil }()
	s.RunUntil(start.Add(within), func() bool { return !at.IsZero() })
	if s.Err != nil {
		return 0, s.Err
	}
	if at.IsZero() {
		return 0, fmt.Errorf("no new leader within %v", within)
	}
	return at.Sub(start), nil
}

// FailoverBound is the documented bound on failover after a leader crash
// on a loss-free network with one-way delay at most maxDelay:
// Misses×Interval + BackoffMax + ClaimWindow + maxDelay.
func FailoverBound(c protocol.Config, maxDelay time.Duration) time.Duration {
	t := c.Timings()
	return t.Suspect + t.BackoffMax + t.ClaimWindow + maxDelay
}

// ResignBound is the documented bound after a graceful Resign:
// ClaimWindow + Interval (+ delays).
func ResignBound(c protocol.Config, maxDelay time.Duration) time.Duration {
	t := c.Timings()
	return t.ClaimWindow + t.Interval + 2*maxDelay
}

// Failover measures, for one seed, the time from crashing a settled leader
// (at a random phase of its heartbeat) to another node becoming leader.
func Failover(base protocol.Config, nodes int, link Link, seed uint64) (time.Duration, error) {
	s := New(Options{Seed: seed, Base: base, Link: link}, nodeIDs(nodes)...)
	old, err := elect(s, 10*time.Second)
	if err != nil {
		return 0, err
	}
	s.Run(time.Duration(s.Rand().Int64N(int64(base.Interval))))
	s.Crash(old)
	return waitNewLeader(s, old, 10*time.Second)
}

// FailoverClaims is Failover that also counts the CLAIM messages (all
// nodes, retransmissions included) sent from the crash until the new leader
// is elected: what one election costs.
func FailoverClaims(base protocol.Config, nodes int, link Link, seed uint64) (time.Duration, uint64, error) {
	return failoverCounting(Options{Seed: seed, Base: base, Link: link}, nodes,
		func(st protocol.Stats) uint64 { return st.ClaimsSent })
}

// FailoverKill measures, for one seed, a process kill on a live host: the
// leader's process dies (at a random phase of its heartbeat) while its host
// answers the followers' probes with "port unreachable" (Options.Probes).
// It returns the time to another node leading and the candidacies (claims
// started, retransmissions not counted) that election took.
func FailoverKill(base protocol.Config, nodes int, link Link, seed uint64) (time.Duration, uint64, error) {
	return failoverCounting(Options{Seed: seed, Base: base, Link: link, Probes: true}, nodes,
		func(st protocol.Stats) uint64 { return st.Elections })
}

// failoverCounting elects a leader on a new simulation with opts, crashes
// it at a random phase of its heartbeat and returns the time to another
// node leading and how much count (summed over the nodes up) grew
// meanwhile.
func failoverCounting(opts Options, nodes int, count func(protocol.Stats) uint64) (time.Duration, uint64, error) {
	s := New(opts, nodeIDs(nodes)...)
	old, err := elect(s, 10*time.Second)
	if err != nil {
		return 0, 0, err
	}
	s.Run(time.Duration(s.Rand().Int64N(int64(opts.Base.Interval))))
	total := func() (c uint64) {
		for _, id := range s.IDs() {
			if s.Up(id) {
				c += count(s.Node(id).Stats())
			}
		}
		return c
	}
	s.Crash(old)
	before := total()
	d, err := waitNewLeader(s, old, 10*time.Second)
	return d, total() - before, err
}

// lastWitnesses makes the last k of ids witnesses (quorum mode).
func lastWitnesses(ids []string, k int) func(string, *protocol.Config) {
	return func(id string, c *protocol.Config) { c.Witness = slices.Index(ids, id) >= len(ids)-k }
}

// FailoverLossy is Failover on a link with random loss, after warmup of
// healthy running so the adaptive detector has learnt the loss; the last
// witnesses of the nodes are witnesses. It returns the failover time and
// the survivors' suspicion threshold at the crash.
func FailoverLossy(base protocol.Config, nodes, witnesses int, loss float64, warmup time.Duration, seed uint64) (time.Duration, int, error) {
	ids := nodeIDs(nodes)
	s := New(Options{Seed: seed, Base: base, Link: LAN, NoCheck: true, Configure: lastWitnesses(ids, witnesses)}, ids...)
	old, err := elect(s, 10*time.Second)
	if err != nil {
		return 0, 0, err
	}
	l := LAN
	l.Loss = loss
	s.SetLink(l)
	s.Run(warmup + time.Duration(s.Rand().Int64N(int64(base.Interval))))
	// A flap during warm-up (rare, while the detector learns the loss)
	// is not what this measures: crash whoever leads now.
	ls := s.Leaders()
	if len(ls) != 1 {
		return 0, 0, fmt.Errorf("after warmup: leaders %v", ls)
	}
	old = ls[0]
	k := 0
	for _, id := range s.ids {
		if id != old {
			k = max(k, s.Node(id).Stats().MissesThreshold)
		}
	}
	s.Crash(old)
	d, err := waitNewLeader(s, old, time.Minute)
	return d, k, err
}

// Resign measures the time from a settled leader's graceful Resign to a new
// leader.
func Resign(base protocol.Config, nodes int, link Link, seed uint64) (time.Duration, error) {
	s := New(Options{Seed: seed, Base: base, Link: link}, nodeIDs(nodes)...)
	old, err := elect(s, 10*time.Second)
	if err != nil {
		return 0, err
	}
	s.Run(time.Duration(s.Rand().Int64N(int64(base.Interval))))
	s.Stop(old)
	return waitNewLeader(s, old, 10*time.Second)
}

// HealResult is what Heal measures.
type HealResult struct {
	// OneLeader is from the first packet crossing to exactly one leader.
	OneLeader time.Duration
	// Agreed is from the first packet crossing to every node naming it.
	Agreed time.Duration
}

// Heal splits nodes in two, lets both sides elect, heals at a random phase
// and measures convergence from the first packet that crosses.
func Heal(base protocol.Config, nodes int, link Link, seed uint64) (HealResult, error) {
	ids := nodeIDs(nodes)
	s := New(Options{Seed: seed, Base: base, Link: link}, ids...)
	if _, err := elect(s, 10*time.Second); err != nil {
		return HealResult{}, err
	}
	k := 1 + s.Rand().IntN(nodes-1)
	s.Partition(ids[:k])
	settle := 2 * FailoverBound(base, link.MaxDelay())
	s.Run(settle)
	if s.Err != nil {
		return HealResult{}, s.Err
	}
	if ls := s.Leaders(); len(ls) != 2 {
		return HealResult{}, fmt.Errorf("partitioned: want a leader per side, got %v", ls)
	}
	s.Run(time.Duration(s.Rand().Int64N(int64(base.Interval))))
	s.Heal()
	var r HealResult
	ok := s.RunUntil(s.Now().Add(10*time.Second), func() bool {
		if c := s.CrossedAt(); !c.IsZero() && r.OneLeader == 0 && len(s.Leaders()) == 1 {
			r.OneLeader = s.Now().Sub(c)
		}
		return r.OneLeader > 0 && s.Converged() == nil
	})
	if !ok {
		return r, fmt.Errorf("not converged after heal: %v %v", s.Err, s.Converged())
	}
	r.Agreed = s.Now().Sub(s.CrossedAt())
	return r, nil
}

// StormResult is what Storm measures.
type StormResult struct {
	// Converge is from the last node's start to one agreed leader.
	Converge time.Duration
	// Candidacies counts nodes that became candidate (claim rounds
	// started), summed over nodes.
	Candidacies uint64
	// Claims counts CLAIM messages sent, retransmissions included.
	Claims uint64
	// Leaderships counts transitions to leader (1 is ideal).
	Leaderships int
}

// Storm starts n nodes at random instants within spread and runs until
// they agree on a leader.
func Storm(base protocol.Config, n int, spread time.Duration, link Link, seed uint64) (StormResult, error) {
	s := New(Options{Seed: seed, Base: base, Link: link})
	ids := nodeIDs(n)
	var last time.Time
	for _, id := range ids {
		at := s.Now().Add(time.Duration(s.Rand().Int64N(int64(spread) + 1)))
		if at.After(last) {
			last = at
		}
		s.At(at, func() { s.Add(id) })
	}
	ok := s.RunUntil(s.Now().Add(30*time.Second), func() bool {
		return len(s.ids) == n && s.Converged() == nil
	})
	if !ok {
		return StormResult{}, fmt.Errorf("storm not converged: %v %v", s.Err, s.Converged())
	}
	r := StormResult{Converge: s.Now().Sub(last), Leaderships: s.Counters.BecameLeader}
	for _, id := range ids {
		st := s.Node(id).Stats()
		r.Candidacies += st.Elections
		r.Claims += st.ClaimsSent
	}
	return r, nil
}

// FlapResult is what Flapping measures.
type FlapResult struct {
	// Simulated is the simulated time after the first election.
	Simulated time.Duration
	// LeaderChanges counts transitions to leader after the first election:
	// every one is spurious, the leader is healthy throughout.
	LeaderChanges int
	// Suspicions and Claims are summed over nodes.
	Suspicions, Claims uint64
	// LeaseRetries and LeasesLost (quorum mode) are summed over nodes:
	// heartbeats a leader resent to save its lease, and leaderships
	// that ended because the lease ran out.
	LeaseRetries, LeasesLost uint64
	// MaxMisses is the highest adaptive threshold a node ended with.
	MaxMisses int
}

// PerDay scales LeaderChanges to one simulated day.
func (f FlapResult) PerDay() float64 {
	return float64(f.LeaderChanges) * float64(24*time.Hour) / float64(f.Simulated)
}

// Flapping runs n healthy nodes, the last witnesses of them witnesses
// (quorum mode), on a link with random loss for d and counts spurious
// leader changes.
func Flapping(base protocol.Config, n, witnesses int, loss float64, d time.Duration, seed uint64) (FlapResult, error) {
	link := LAN
	ids := nodeIDs(n)
	s := New(Options{Seed: seed, Base: base, Link: link, NoCheck: true, Configure: lastWitnesses(ids, witnesses)}, ids...)
	if _, err := elect(s, 10*time.Second); err != nil {
		return FlapResult{}, err
	}
	link.Loss = loss
	s.SetLink(link)
	before := s.Counters.BecameLeader
	s.Run(d)
	if s.Err != nil {
		return FlapResult{}, s.Err
	}
	r := FlapResult{Simulated: d, LeaderChanges: s.Counters.BecameLeader - before}
	for _, id := range s.ids {
		st := s.Node(id).Stats()
		r.Suspicions += st.Suspicions
		r.Claims += st.ClaimsSent
		r.LeaseRetries += st.LeaseRetries
		r.LeasesLost += st.LeaseLost
		if s.Node(id).Status().Role != election.Leader {
			r.MaxMisses = max(r.MaxMisses, st.MissesThreshold)
		}
	}
	return r, nil
}
