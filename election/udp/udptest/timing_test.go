package udptest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// TestQuorumRollingTimingChange is issue 22's hole 2: a quorum cluster of
// five changes its interval one node at a time, by graceful restart, both
// ways — 1 s to 200 ms restarting the followers first, 200 ms to 1 s
// restarting the leader first — with state files (a restarted node keeps
// its promise) or without (a restarted node then stays down for its old
// promise first, as operations.md says). After each restart the current
// leader is cut off until a successor may be elected twice over, then the
// network heals. After every event at most one node may act as leader,
// paused or cut-off ones included.
func TestQuorumRollingTimingChange(t *testing.T) {
	for _, tc := range []struct {
		name        string
		from, to    time.Duration
		leaderFirst bool
	}{
		{"1s to 200ms, followers first", time.Second, 200 * time.Millisecond, false},
		{"200ms to 1s, leader first", 200 * time.Millisecond, time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, seed := range seeds(t, 20) {
				roll := func(trace bool) (*Sim, error) {
					return rollingTimingChange(seed, tc.from, tc.to, tc.leaderFirst, trace)
				}
				s, err := roll(*flagTrace && *flagSeed != 0)
				if *flagTrace && *flagSeed != 0 {
					t.Log("\n" + s.Trace())
				}
				if err != nil {
					rs, rerr := roll(true)
					t.Fatalf("seed %d: %v\nreplay: go test ./election/udp/udptest -run 'TestQuorumRollingTimingChange' -sim.seed=%d -sim.trace -v\nreplayed: %v\ntrace (last lines):\n%s",
						seed, err, seed, rerr, tail(rs.Trace(), 150))
				}
			}
		})
	}
}

// rollingTimingChange runs one TestQuorumRollingTimingChange scenario.
func rollingTimingChange(seed uint64, from, to time.Duration, leaderFirst, trace bool) (*Sim, error) {
	ids := nodeIDs(5)
	interval := map[string]time.Duration{}
	for _, id := range ids {
		interval[id] = from
	}
	base := protocol.DefaultLANConfig()
	base.ClusterSize = len(ids)
	base.Interval = min(from, to)
	stateFiles := seed%2 == 0
	s := New(Options{Seed: seed, Base: base, Link: LAN, Trace: trace, StateFiles: stateFiles,
		Configure: func(id string, c *protocol.Config) {
			c.Interval = interval[id]
			c.Priority = uint8(250 - 25*slices.Index(ids, id)) // n00 best: successors are foreseeable
		}}, ids...)
	s.logf("rolling timing change %v -> %v, leader first %v, state files %v", from, to, leaderFirst, stateFiles)
	promise := func(d time.Duration) time.Duration { return time.Duration(base.Misses) * d }
	settle := 4*promise(max(from, to)) + 5*max(from, to) + 2*time.Second
	r := s.Rand()
	l, err := elect(s, settle)
	if err != nil {
		return s, err
	}
	if l != ids[0] {
		// The best node leads as the change starts (a restart hands over
		// to it), so the successors named in the roll are foreseeable.
		s.Run(2 * from)
		s.Stop(l)
		s.Restart(l)
		if _, err := elect(s, settle); err != nil {
			return s, err
		}
	}
	// next is the node to restart: leader first, the leader while it
	// has the old timing, else the best node that has; followers first,
	// the worst follower that has, the leader last.
	next := func(l string) string {
		old := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return interval[id] != from })
		if leaderFirst {
			if interval[l] == from {
				return l
			}
			return old[0]
		}
		for _, id := range slices.Backward(old) {
			if id != l {
				return id
			}
		}
		return l
	}
	for range ids {
		s.Run(2*max(from, to) + time.Duration(r.Int64N(int64(3*max(from, to))))) // the leader hears everyone
		l, err := elect(s, settle)
		if err != nil {
			return s, err
		}
		next := next(l)
		s.logf("restart %s with interval %v", next, to)
		s.Stop(next)
		down := time.Duration(r.Int64N(int64(2 * from)))
		if !stateFiles {
			down += promise(from) // its old promise runs out before it comes back
		}
		interval[next] = to
		s.Run(down)
		s.Restart(next)
		if _, err := elect(s, settle); err != nil {
			return s, fmt.Errorf("after restarting %s: %w", next, err)
		}
		s.Run(time.Duration(r.Int64N(int64(max(from, to)))))
		if l, err = elect(s, settle); err != nil {
			return s, err
		}
		s.logf("cut off leader %s", l)
		s.Isolate(l)
		s.Run(2*promise(max(from, to)) + 5*max(from, to))
		s.Heal()
		if _, err := elect(s, settle); err != nil {
			return s, fmt.Errorf("after cutting off %s: %w", l, err)
		}
	}
	return s, s.Err
}
