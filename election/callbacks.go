package election

import "context"

// Callbacks are told about leadership changes, in the shape of client-go's
// leaderelection.LeaderCallbacks. Any field may be nil.
//
// Ordering guarantees, for every Elector in this module (they all report
// through a Notifier):
//
//   - Callbacks are called one at a time (never concurrently), on the
//     goroutine that reports the transition, in the order the transitions
//     happened. A callback must not report transitions itself. They must return promptly: start a
//     goroutine for long work. A slow callback delays the next one, never
//     the election itself for modes that run their protocol elsewhere.
//   - Each transition is reported exactly once.
//   - On becoming leader: OnNewLeader(self) then OnStartedLeading(ctx, term).
//   - On losing leadership: the leadership context is cancelled first
//     (synchronously, so work stops as early as possible), then
//     OnStoppedLeading(), then OnNewLeader(next) where next may be the zero
//     LeaderInfo if no leader is known yet.
//   - OnStartedLeading and OnStoppedLeading strictly alternate, starting
//     with OnStartedLeading; when Run returns, every started leadership has
//     been stopped.
//   - OnNewLeader is called whenever the known leader (id or term) changes,
//     including to "none" (zero LeaderInfo).
type Callbacks struct {
	// OnStartedLeading is called when this node becomes leader. ctx is
	// cancelled the moment leadership ends: lost, resigned, or the
	// elector's Run context done. term is the leadership's fencing token.
	OnStartedLeading func(ctx context.Context, term uint64)
	// OnStoppedLeading is called after leadership ends and its context has
	// been cancelled.
	OnStoppedLeading func()
	// OnNewLeader is called when the known leader changes.
	OnNewLeader func(leader LeaderInfo)
}

// Combine returns Callbacks that call each of cbs in turn, in the order
// given, so several consumers (job runner, hooks, metrics) can watch one
// Elector.
func Combine(cbs ...Callbacks) Callbacks {
	return Callbacks{
		OnStartedLeading: func(ctx context.Context, term uint64) {
			for _, cb := range cbs {
				if cb.OnStartedLeading != nil {
					cb.OnStartedLeading(ctx, term)
				}
			}
		},
		OnStoppedLeading: func() {
			for _, cb := range cbs {
				if cb.OnStoppedLeading != nil {
					cb.OnStoppedLeading()
				}
			}
		},
		OnNewLeader: func(l LeaderInfo) {
			for _, cb := range cbs {
				if cb.OnNewLeader != nil {
					cb.OnNewLeader(l)
				}
			}
		},
	}
}
