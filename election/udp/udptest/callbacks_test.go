package udptest

import (
	"context"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kinds strips times and incarnations so records compare by content.
func kinds(evs []CallbackEvent) []CallbackEvent {
	out := make([]CallbackEvent, len(evs))
	for i, e := range evs {
		out[i] = CallbackEvent{Kind: e.Kind, Term: e.Term, Leader: e.Leader}
	}
	return out
}

// TestCallbacksRecordEachLife follows one node through leading, a graceful
// Stop and a crash, and checks the record is what client-go-style
// callbacks promise: OnNewLeader(self) then OnStartedLeading; on Stop the
// leadership stops and the leader becomes unknown; a crash runs nothing.
func TestCallbacksRecordEachLife(t *testing.T) {
	s := New(Options{Seed: 1, Link: LAN}, nodeIDs(3)...)
	first, err := elect(s, 10*time.Second)
	require.NoError(t, err)
	t1 := s.Node(first).Status().Leader.Term
	self := election.LeaderInfo{ID: first, Term: t1}
	assert.Equal(t, []CallbackEvent{{Kind: NewLeader, Leader: self}, {Kind: StartedLeading, Term: t1}},
		kinds(s.Callbacks(first)))
	for _, id := range s.IDs() {
		if id != first {
			evs := s.Callbacks(id)
			require.NotEmpty(t, evs)
			last := evs[len(evs)-1]
			assert.Equal(t, NewLeader, last.Kind, "%s", id)
			assert.Equal(t, self.ID, last.Leader.ID, "%s follows", id)
			assert.Equal(t, self.Term, last.Leader.Term, "%s follows", id)
		}
	}

	s.Stop(first)
	assert.Equal(t, []CallbackEvent{{Kind: StoppedLeading}, {Kind: NewLeader}, {Kind: Exited}},
		kinds(s.Callbacks(first))[2:], "Stop: stopped, no leader known, process gone")

	second, err := elect(s, 10*time.Second)
	require.NoError(t, err)
	t2 := s.Node(second).Status().Leader.Term
	assert.Greater(t, t2, t1)
	before := len(s.Callbacks(second))
	s.Crash(second)
	evs := s.Callbacks(second)
	assert.Equal(t, []CallbackEvent{{Kind: Exited}}, kinds(evs)[before:], "a crash runs no callbacks")
	assert.Equal(t, CallbackEvent{Kind: StartedLeading, Term: t2}, kinds(evs)[before-1])
	_, err = elect(s, 10*time.Second)
	require.NoError(t, err)
	require.NoError(t, s.Err)
}

// TestCallbackChecksBite feeds each check a wrong callback sequence
// directly and expects the sim to flag it.
func TestCallbackChecksBite(t *testing.T) {
	tests := []struct {
		name string
		bad  func(s *Sim, leader, follower *app, term uint64)
		want string
	}{
		{
			name: "started twice",
			bad: func(_ *Sim, l, _ *app, term uint64) {
				l.cb.OnStartedLeading(context.Background(), term)
			},
			want: "no OnStoppedLeading between",
		},
		{
			name: "stopped while not leading",
			bad:  func(_ *Sim, _, f *app, _ uint64) { f.cb.OnStoppedLeading() },
			want: "without a leadership to stop",
		},
		{
			name: "stopped before ctx cancelled",
			bad:  func(_ *Sim, l, _ *app, _ uint64) { l.cb.OnStoppedLeading() },
			want: "before the leadership context was cancelled",
		},
		{
			name: "started without OnNewLeader(self)",
			bad: func(_ *Sim, _, f *app, term uint64) {
				f.cb.OnStartedLeading(context.Background(), term+1)
			},
			want: "not itself",
		},
		{
			name: "two nodes start one term",
			bad: func(s *Sim, _, f *app, term uint64) {
				f.cb.OnNewLeader(election.LeaderInfo{ID: "n01", Term: term})
				f.cb.OnStartedLeading(context.Background(), term)
			},
			want: "two nodes started leading term",
		},
		{
			name: "term not above an earlier one",
			bad: func(s *Sim, l, _ *app, term uint64) {
				ctx, cancel := context.WithCancel(context.Background())
				l.ctx = ctx // a leadership that was properly cancelled...
				cancel()
				l.cb.OnStoppedLeading()
				l.cb.OnStartedLeading(context.Background(), term) // ...then the same term again
			},
			want: "not above its earlier leadership term",
		},
		{
			name: "callbacks lead, protocol does not",
			bad: func(s *Sim, _, f *app, _ uint64) {
				f.leading, f.ctx, f.term = true, context.Background(), 1
				s.notify(s.nodes["n01"])
			},
			want: "callbacks say it leads term 1, the protocol says follower",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Options{Seed: 1, Link: LAN}, "n00", "n01")
			leader, err := elect(s, 10*time.Second)
			require.NoError(t, err)
			require.Equal(t, "n00", leader, "the cases assume n00 leads")
			term := s.Node(leader).Status().Leader.Term
			tt.bad(s, s.nodes["n00"].app, s.nodes["n01"].app, term)
			require.Error(t, s.Err)
			assert.Contains(t, s.Err.Error(), tt.want)
		})
	}
}

// TestCallbackChecksCatchHighestSeenTerm emulates the Notifier bug found on
// a real network (leadership term taken from Status.Term, the highest term
// seen) and checks the sim now catches it where it happened: a paused
// leader wakes beside its successor. That takes quorum mode: without it a
// leader paused for Misses intervals steps down as it wakes (onPause), so
// it never leads beside a successor; with it the lease decides, and a
// leader that wakes to a successor's queued heartbeat before its own tick
// still leads for that one Step.
func TestCallbackChecksCatchHighestSeenTerm(t *testing.T) {
	highestSeen := func(st election.Status) election.Status {
		if st.Role == election.Leader {
			st.Leader.Term = st.Term
		}
		return st
	}
	for _, feed := range []struct {
		name string
		fn   func(election.Status) election.Status
		bad  bool
	}{{"as Run feeds it", nil, false}, {"highest term seen", highestSeen, true}} {
		t.Run(feed.name, func(t *testing.T) {
			caught := 0
			ss := seeds(t, 20)
			for _, seed := range ss {
				c := protocol.DefaultLANConfig()
				c.ClusterSize = 3
				s := New(Options{Seed: seed, Link: LAN, Base: c, feed: feed.fn}, nodeIDs(3)...)
				old, err := elect(s, 10*time.Second)
				require.NoError(t, err, "seed %d", seed)
				s.Pause(old)
				s.Run(3 * time.Second)
				s.Resume(old)
				s.Run(time.Second)
				if s.Err != nil {
					caught++
					assert.Contains(t, s.Err.Error(), "two nodes started leading term", "seed %d", seed)
				}
			}
			if feed.bad {
				// Resume hands the queued deliveries over before or after
				// the tick, by seed: half the seeds wake to one first.
				assert.GreaterOrEqual(t, 2*caught, len(ss)-2, "a paused leader that wakes beside a successor is caught")
			} else {
				assert.Zero(t, caught)
			}
		})
	}
}
