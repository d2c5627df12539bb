package election_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// recorder collects callback calls as short strings ("new:a/3", "start:3",
// "stop") and checks, at the moment each call happens, the invariants a
// consumer relies on.
type recorder struct {
	t *testing.T

	mu     sync.Mutex
	events []string
	// ctx is the context of the current leadership, nil while not leading.
	ctx context.Context
	// ctxs holds every leadership context handed out, in order.
	ctxs []context.Context
	// cancelledAtStop records, per OnStoppedLeading, whether the
	// leadership context was already cancelled when it ran.
	cancelledAtStop []bool
}

func newRecorder(t *testing.T) *recorder { return &recorder{t: t} }

func (r *recorder) callbacks() election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: func(ctx context.Context, term uint64) {
			r.mu.Lock()
			defer r.mu.Unlock()
			assert.Nil(r.t, r.ctx, "OnStartedLeading twice without OnStoppedLeading")
			assert.NoError(r.t, ctx.Err(), "leadership ctx already cancelled at start")
			r.ctx = ctx
			r.ctxs = append(r.ctxs, ctx)
			r.events = append(r.events, fmt.Sprintf("start:%d", term))
		},
		OnStoppedLeading: func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if assert.NotNil(r.t, r.ctx, "OnStoppedLeading without OnStartedLeading") {
				r.cancelledAtStop = append(r.cancelledAtStop, r.ctx.Err() != nil)
			}
			r.ctx = nil
			r.events = append(r.events, "stop")
		},
		OnNewLeader: func(l election.LeaderInfo) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.events = append(r.events, fmt.Sprintf("new:%s/%d", l.ID, l.Term))
		},
	}
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	return ev
}

// Status constructors used by the tables below; "me" is this node.
func follower(term uint64) election.Status {
	return election.Status{Node: "me", Role: election.Follower, Term: term}
}

func followerOf(id string, term uint64) election.Status {
	return election.Status{Node: "me", Role: election.Follower, Term: term,
		Leader: election.LeaderInfo{ID: id, Addr: id + ":7483", Term: term}}
}

func candidate(term uint64) election.Status {
	return election.Status{Node: "me", Role: election.Candidate, Term: term}
}

func leading(term uint64) election.Status {
	return election.Status{Node: "me", Role: election.Leader, Term: term,
		Leader: election.LeaderInfo{ID: "me", Term: term}}
}

func TestNotifierTransitions(t *testing.T) {
	tests := []struct {
		name    string
		initial election.Status
		updates []election.Status
		want    []string
	}{
		{
			name:    "initial status is not reported",
			initial: follower(0),
			updates: []election.Status{follower(0)},
			want:    nil,
		},
		{
			name:    "follower learns a leader",
			initial: follower(0),
			updates: []election.Status{followerOf("a", 1)},
			want:    []string{"new:a/1"},
		},
		{
			name:    "becoming leader: OnNewLeader(self) then OnStartedLeading",
			initial: follower(0),
			updates: []election.Status{leading(1)},
			want:    []string{"new:me/1", "start:1"},
		},
		{
			name:    "candidate is not leading",
			initial: follower(0),
			updates: []election.Status{candidate(1), leading(1)},
			want:    []string{"new:me/1", "start:1"},
		},
		{
			name:    "losing leadership to another: stop then OnNewLeader(next)",
			initial: follower(0),
			updates: []election.Status{leading(1), followerOf("b", 2)},
			want:    []string{"new:me/1", "start:1", "stop", "new:b/2"},
		},
		{
			name:    "losing leadership to nobody reports the zero leader",
			initial: follower(0),
			updates: []election.Status{leading(1), follower(1)},
			want:    []string{"new:me/1", "start:1", "stop", "new:/0"},
		},
		{
			name:    "leader becoming candidate stops leading",
			initial: follower(0),
			updates: []election.Status{leading(1), candidate(2)},
			want:    []string{"new:me/1", "start:1", "stop", "new:/0"},
		},
		{
			name:    "term change while leading is stop then start",
			initial: follower(0),
			updates: []election.Status{leading(1), leading(2)},
			want:    []string{"new:me/1", "start:1", "stop", "new:me/2", "start:2"},
		},
		{
			name:    "repeated identical statuses are reported once",
			initial: follower(0),
			updates: []election.Status{
				followerOf("a", 1), followerOf("a", 1),
				leading(2), leading(2), leading(2),
				followerOf("a", 3), followerOf("a", 3),
			},
			want: []string{"new:a/1", "new:me/2", "start:2", "stop", "new:a/3"},
		},
		{
			name:    "leader changing id at the same term is reported",
			initial: follower(0),
			updates: []election.Status{followerOf("a", 4), followerOf("b", 4)},
			want:    []string{"new:a/4", "new:b/4"},
		},
		{
			name:    "Since alone changing is not a transition",
			initial: follower(0),
			updates: []election.Status{
				followerOf("a", 1),
				func() election.Status { s := followerOf("a", 1); s.Since = time.Unix(100, 0); return s }(),
			},
			want: []string{"new:a/1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t)
			n := election.NewNotifier(t.Context(), rec.callbacks(), tt.initial)
			for _, s := range tt.updates {
				n.Update(s)
			}
			assert.Equal(t, tt.want, rec.take())
			assert.Equal(t, tt.updates[len(tt.updates)-1], n.Status())
			for i, c := range rec.cancelledAtStop {
				assert.True(t, c, "leadership %d: ctx not cancelled before OnStoppedLeading", i)
			}
		})
	}
}

func TestNotifierInitialStatus(t *testing.T) {
	initial := followerOf("a", 7)
	n := election.NewNotifier(t.Context(), election.Callbacks{}, initial)
	assert.Equal(t, initial, n.Status())
}

func TestNotifierNilCallbacks(t *testing.T) {
	n := election.NewNotifier(t.Context(), election.Callbacks{}, follower(0))
	require.NotPanics(t, func() {
		n.Update(leading(1))
		n.Update(leading(2))
		n.Update(followerOf("b", 3))
		n.Stop(follower(3))
	})
	assert.Equal(t, follower(3), n.Status())
}

func TestNotifierCancelsContextBeforeStoppedLeading(t *testing.T) {
	var (
		leaderCtx    context.Context
		errAtStopped error
	)
	n := election.NewNotifier(t.Context(), election.Callbacks{
		OnStartedLeading: func(ctx context.Context, _ uint64) { leaderCtx = ctx },
		OnStoppedLeading: func() { errAtStopped = leaderCtx.Err() },
	}, follower(0))

	n.Update(leading(1))
	require.NotNil(t, leaderCtx)
	require.NoError(t, leaderCtx.Err(), "ctx must stay live while leading")

	n.Update(followerOf("b", 2))
	assert.ErrorIs(t, errAtStopped, context.Canceled)
}

func TestNotifierTermChangeGivesFreshContext(t *testing.T) {
	rec := newRecorder(t)
	n := election.NewNotifier(t.Context(), rec.callbacks(), follower(0))
	n.Update(leading(1))
	n.Update(leading(2))

	require.Len(t, rec.ctxs, 2)
	assert.Error(t, rec.ctxs[0].Err(), "old term's ctx must be cancelled")
	assert.NoError(t, rec.ctxs[1].Err(), "new term's ctx must be live")
	assert.Equal(t, []bool{true}, rec.cancelledAtStop)
}

func TestNotifierLeadershipContextEndsWithParent(t *testing.T) {
	parent, cancel := context.WithCancel(t.Context())
	rec := newRecorder(t)
	n := election.NewNotifier(parent, rec.callbacks(), follower(0))
	n.Update(leading(1))
	require.Len(t, rec.ctxs, 1)

	cancel()
	assert.ErrorIs(t, rec.ctxs[0].Err(), context.Canceled)
	// Cancelling the parent alone reports nothing: the elector calls Stop.
	assert.Equal(t, []string{"new:me/1", "start:1"}, rec.take())
}

func TestNotifierStop(t *testing.T) {
	tests := []struct {
		name    string
		updates []election.Status
		stop    election.Status
		want    []string
		final   election.Status
	}{
		{
			name:    "follower stopping reports nothing",
			updates: []election.Status{followerOf("a", 1)},
			stop:    followerOf("a", 1),
			want:    nil,
			final:   followerOf("a", 1),
		},
		{
			name:    "leader stopping with a follower status",
			updates: []election.Status{leading(1)},
			stop:    follower(1),
			want:    []string{"stop", "new:/0"},
			final:   follower(1),
		},
		{
			// Electors may pass their last (leader) status to Stop; it
			// must still end leadership, and the node must not go on
			// naming itself leader once it has stepped down.
			name:    "leader stopping with its leader status",
			updates: []election.Status{leading(1)},
			stop:    leading(1),
			want:    []string{"stop", "new:/0"},
			final:   follower(1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t)
			n := election.NewNotifier(t.Context(), rec.callbacks(), follower(0))
			for _, s := range tt.updates {
				n.Update(s)
			}
			rec.take()

			n.Stop(tt.stop)
			assert.Equal(t, tt.want, rec.take())
			assert.Equal(t, tt.final, n.Status())
			assert.False(t, n.Status().IsLeader())
			for _, ctx := range rec.ctxs {
				assert.Error(t, ctx.Err(), "leadership ctx still live after Stop")
			}
			assert.Equal(t, len(rec.ctxs), len(rec.cancelledAtStop), "every start has its stop")

			n.Stop(tt.stop)
			assert.Empty(t, rec.take(), "second Stop must report nothing")
		})
	}
}

// A callback that reads the notifier's status (directly, or through its
// Elector's Status method) must not deadlock and must see the new status.
func TestNotifierCallbackMayCallStatus(t *testing.T) {
	var (
		n    *election.Notifier
		seen []election.Status
	)
	record := func() { seen = append(seen, n.Status()) }
	n = election.NewNotifier(t.Context(), election.Callbacks{
		OnStartedLeading: func(context.Context, uint64) { record() },
		OnStoppedLeading: record,
		OnNewLeader:      func(election.LeaderInfo) { record() },
	}, follower(0))

	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Update(leading(1))
		n.Update(followerOf("b", 2))
		n.Stop(followerOf("b", 2))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a guard against deadlock, not a wait
		t.Fatal("callback calling Status deadlocked")
	}
	assert.Equal(t, []election.Status{
		leading(1), leading(1), // OnNewLeader, OnStartedLeading
		followerOf("b", 2), followerOf("b", 2), // OnStoppedLeading, OnNewLeader
	}, seen)
}

// Updates from several goroutines never run callbacks concurrently, and
// the reported sequence still obeys every ordering rule.
func TestNotifierConcurrentUpdates(t *testing.T) {
	var inside atomic.Int32
	rec := newRecorder(t)
	inner := rec.callbacks()
	guard := func() func() {
		assert.Equal(t, int32(1), inside.Add(1), "callbacks ran concurrently")
		return func() { inside.Add(-1) }
	}
	n := election.NewNotifier(t.Context(), election.Callbacks{
		OnStartedLeading: func(ctx context.Context, term uint64) {
			defer guard()()
			inner.OnStartedLeading(ctx, term)
		},
		OnStoppedLeading: func() { defer guard()(); inner.OnStoppedLeading() },
		OnNewLeader:      func(l election.LeaderInfo) { defer guard()(); inner.OnNewLeader(l) },
	}, follower(0))

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if (i+g)%2 == 0 {
					n.Update(leading(uint64(g*1000 + i)))
				} else {
					n.Update(followerOf("other", uint64(g*1000+i)))
				}
			}
		})
	}
	wg.Wait()
	n.Stop(follower(1 << 20))
	checkSequence(t, rec.take())
	for i, c := range rec.cancelledAtStop {
		assert.True(t, c, "leadership %d: ctx not cancelled before OnStoppedLeading", i)
	}
}

// A seeded random walk over statuses: whatever the order of transitions,
// the reported sequence obeys the documented rules and every leadership
// context is cancelled once Stop returns.
func TestNotifierRandomWalk(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 0))
		rec := newRecorder(t)
		n := election.NewNotifier(t.Context(), rec.callbacks(), follower(0))
		term := uint64(0)
		for range 50 {
			if rng.IntN(3) == 0 {
				term++
			}
			switch rng.IntN(5) {
			case 0:
				n.Update(follower(term))
			case 1:
				n.Update(followerOf([]string{"a", "b"}[rng.IntN(2)], term))
			case 2:
				n.Update(candidate(term))
			default:
				n.Update(leading(term))
			}
		}
		n.Stop(follower(term))
		ev := rec.take()
		if !checkSequence(t, ev) {
			t.Fatalf("seed %d: events %v", seed, ev)
		}
		for _, ctx := range rec.ctxs {
			require.Error(t, ctx.Err(), "seed %d: leadership ctx live after Stop", seed)
		}
		require.Len(t, rec.cancelledAtStop, len(rec.ctxs), "seed %d", seed)
		for _, c := range rec.cancelledAtStop {
			require.True(t, c, "seed %d: ctx not cancelled before OnStoppedLeading", seed)
		}
	}
}

// checkSequence checks the Callbacks ordering rules on a recorded event
// list that ends after Stop: starts and stops alternate beginning with a
// start and ending stopped; every start is directly preceded by
// OnNewLeader(self) for the same term; every stop is directly followed by
// OnNewLeader (of the next leader, none, or self under a new term); no
// OnNewLeader repeats the previous one.
func checkSequence(t *testing.T, ev []string) bool {
	t.Helper()
	ok := true
	leadingNow := false
	lastNew := "new:/0"
	for i, e := range ev {
		switch {
		case e == "stop":
			ok = assert.True(t, leadingNow, "event %d: stop while not leading", i) && ok
			leadingNow = false
			if ok = assert.Less(t, i+1, len(ev), "stop must be followed by OnNewLeader") && ok; ok {
				next := ev[i+1]
				ok = assert.Regexp(t, `^new:`, next, "event %d: stop not followed by OnNewLeader", i) && ok
			}
		case len(e) > 6 && e[:6] == "start:":
			ok = assert.False(t, leadingNow, "event %d: start while leading", i) && ok
			leadingNow = true
			ok = assert.Equal(t, "new:me/"+e[6:], lastNewBefore(ev, i), "event %d: start not preceded by OnNewLeader(self)", i) && ok
		default:
			ok = assert.NotEqual(t, lastNew, e, "event %d: OnNewLeader repeated", i) && ok
			lastNew = e
		}
	}
	return assert.False(t, leadingNow, "still leading after Stop") && ok
}

func lastNewBefore(ev []string, i int) string {
	if i == 0 {
		return ""
	}
	return ev[i-1]
}

func TestNotifierIgnoresUpdatesAfterStop(t *testing.T) {
	var started int
	n := election.NewNotifier(context.Background(), election.Callbacks{
		OnStartedLeading: func(context.Context, uint64) { started++ },
	}, election.Status{Node: "a"})
	n.Stop(election.Status{Node: "a"})
	n.Update(election.Status{Node: "a", Role: election.Leader, Term: 2, Leader: election.LeaderInfo{ID: "a", Term: 2}})
	assert.Equal(t, 0, started, "no leadership may start after Stop")
	assert.Equal(t, election.Follower, n.Status().Role)
}

// A leader that hears of a higher term (a rival's claim it answers) keeps
// leading under its own term: the fencing token is Leader.Term, not the
// highest term seen. Found by scripts/netns-test.sh ("no term led by two
// nodes").
func TestNotifierLeadsUnderItsOwnTermNotTheHighestSeen(t *testing.T) {
	var events []string
	n := election.NewNotifier(context.Background(), election.Callbacks{
		OnStartedLeading: func(_ context.Context, term uint64) { events = append(events, fmt.Sprint("start ", term)) },
		OnStoppedLeading: func() { events = append(events, "stop") },
	}, election.Status{Node: "a"})
	lead := election.LeaderInfo{ID: "a", Term: 5}
	n.Update(election.Status{Node: "a", Role: election.Leader, Term: 5, Leader: lead})
	n.Update(election.Status{Node: "a", Role: election.Leader, Term: 9, Leader: lead})
	assert.Equal(t, []string{"start 5"}, events, "seeing term 9 neither restarts nor re-terms the leadership")
	n.Update(election.Status{Node: "a", Role: election.Follower, Term: 9, Leader: election.LeaderInfo{ID: "b", Term: 9}})
	assert.Equal(t, []string{"start 5", "stop"}, events)
}
