package election_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// logCallbacks returns Callbacks that append "name:event" to *log.
func logCallbacks(name string, log *[]string) election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: func(_ context.Context, term uint64) {
			*log = append(*log, fmt.Sprintf("%s:start:%d", name, term))
		},
		OnStoppedLeading: func() { *log = append(*log, name+":stop") },
		OnNewLeader: func(l election.LeaderInfo) {
			*log = append(*log, fmt.Sprintf("%s:new:%s/%d", name, l.ID, l.Term))
		},
	}
}

func TestCombineCallsEachInOrder(t *testing.T) {
	var log []string
	cb := election.Combine(logCallbacks("a", &log), logCallbacks("b", &log), logCallbacks("c", &log))

	cb.OnNewLeader(election.LeaderInfo{ID: "x", Term: 2})
	cb.OnStartedLeading(t.Context(), 3)
	cb.OnStoppedLeading()

	assert.Equal(t, []string{
		"a:new:x/2", "b:new:x/2", "c:new:x/2",
		"a:start:3", "b:start:3", "c:start:3",
		"a:stop", "b:stop", "c:stop",
	}, log)
}

func TestCombineSkipsNilFields(t *testing.T) {
	var log []string
	cb := election.Combine(
		election.Callbacks{},
		election.Callbacks{OnStoppedLeading: func() { log = append(log, "only-stop") }},
		logCallbacks("full", &log),
	)
	require.NotPanics(t, func() {
		cb.OnNewLeader(election.LeaderInfo{ID: "x", Term: 1})
		cb.OnStartedLeading(t.Context(), 1)
		cb.OnStoppedLeading()
	})
	assert.Equal(t, []string{"full:new:x/1", "full:start:1", "only-stop", "full:stop"}, log)
}

func TestCombineOfNothing(t *testing.T) {
	cb := election.Combine()
	require.NotPanics(t, func() {
		cb.OnNewLeader(election.LeaderInfo{})
		cb.OnStartedLeading(t.Context(), 1)
		cb.OnStoppedLeading()
	})
}

// Every consumer gets the same leadership context, so all of them see it
// cancelled before any of them is told OnStoppedLeading.
func TestCombineSharesLeadershipContext(t *testing.T) {
	var ctxs []context.Context
	var errsAtStop []error
	consumer := func() election.Callbacks {
		var mine context.Context
		return election.Callbacks{
			OnStartedLeading: func(ctx context.Context, _ uint64) { mine = ctx; ctxs = append(ctxs, ctx) },
			OnStoppedLeading: func() { errsAtStop = append(errsAtStop, mine.Err()) },
		}
	}
	n := election.NewNotifier(t.Context(), election.Combine(consumer(), consumer()), follower(0))
	n.Update(leading(5))
	n.Update(followerOf("b", 6))

	require.Len(t, ctxs, 2)
	assert.Same(t, ctxs[0], ctxs[1])
	assert.Len(t, errsAtStop, 2)
	for _, err := range errsAtStop {
		assert.ErrorIs(t, err, context.Canceled)
	}
}

// Through a Notifier, a combined consumer list sees each transition as a
// whole: all consumers' OnStoppedLeading before anyone's OnNewLeader(next).
func TestCombineWithNotifierOrder(t *testing.T) {
	var log []string
	n := election.NewNotifier(t.Context(),
		election.Combine(logCallbacks("runner", &log), logCallbacks("hooks", &log)), follower(0))
	n.Update(leading(1))
	n.Update(followerOf("b", 2))
	n.Stop(followerOf("b", 2))

	assert.Equal(t, []string{
		"runner:new:me/1", "hooks:new:me/1",
		"runner:start:1", "hooks:start:1",
		"runner:stop", "hooks:stop",
		"runner:new:b/2", "hooks:new:b/2",
	}, log)
}
