package metrics

import (
	"context"
	"sync"

	"github.com/lanleader/lanleader/election"
)

// Callbacks returns election callbacks that keep lanleader_is_leader,
// lanleader_has_leader, lanleader_term and lanleader_leader_changes_total
// up to date. Combine them with the other consumers' (election.Combine).
//
// leader_changes_total counts OnNewLeader calls that name a leader; a
// leader going away and the next one appearing is one change, not two.
// term only grows, as terms do. Call it once per Elector: each call keeps
// its own highest term.
func (m *Metrics) Callbacks() election.Callbacks {
	var (
		mu      sync.Mutex
		maxTerm uint64
	)
	seeTerm := func(t uint64) {
		mu.Lock()
		defer mu.Unlock()
		if t > maxTerm {
			maxTerm = t
			m.term.Set(float64(t))
		}
	}
	return election.Callbacks{
		OnStartedLeading: func(_ context.Context, term uint64) {
			seeTerm(term)
			m.isLeader.Set(1)
		},
		OnStoppedLeading: func() {
			m.isLeader.Set(0)
		},
		OnNewLeader: func(l election.LeaderInfo) {
			if !l.Known() {
				m.hasLeader.Set(0)
				return
			}
			seeTerm(l.Term)
			m.hasLeader.Set(1)
			m.leaderChanges.Inc()
		},
	}
}
