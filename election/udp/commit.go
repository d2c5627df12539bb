package udp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lanleader/lanleader/election"
)

// ErrNotCommitted is returned by Commit when the payload could not be
// recorded in the cluster: this node stopped leading, or (quorum mode) no
// majority acknowledged it in time.
var ErrNotCommitted = errors.New("udp: payload not committed")

// commitWait is one Commit call waiting for the run loop.
type commitWait struct {
	ver      uint64 // payload version to commit, set by the run loop
	deadline time.Time
	done     chan error // capacity 1
}

// Commit publishes the current payload (Config.Payload) at once and waits
// until the cluster holds it: without quorum, until a heartbeat carrying it
// has been handed to the transport; in quorum mode, until a majority (this
// node included) has acknowledged a heartbeat carrying it, about one round
// trip, so any leader elected after this one hears it in a vote. It returns
// ErrNotCommitted (wrapped) if this node does not lead, stops leading, may
// not act as leader when the acknowledgements are in (its lease ended: it
// stalled), or no majority acknowledges within the longest promise
// period (Timings.MaxPromise: on a lossy link the promises, and so the
// leases, grow that long), and ctx.Err() if ctx ends first. The job
// runner calls it, through its Cluster (udpjobs), after recording a run and
// before starting it.
func (e *Elector) Commit(ctx context.Context) error {
	wait := e.cfg.Protocol.Timings().MaxPromise
	w := &commitWait{deadline: e.clock.Now().Add(wait), done: make(chan error, 1)}
	select {
	case e.commits <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-e.done:
		return fmt.Errorf("%w: elector stopped", ErrNotCommitted)
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settleCommits answers the waiting Commit calls whose leadership ended,
// whose deadline passed, or whose payload version is committed, in that
// order: a leader that stalled past the deadline and handles a queued ACK
// before its timer's Tick fails the call, whatever the ACK says. Run loop
// only, after flush.
func (e *Elector) settleCommits(now time.Time) {
	if len(e.waiting) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	keep := e.waiting[:0]
	for _, w := range e.waiting {
		switch {
		case e.node.Status().Role != election.Leader:
			w.done <- fmt.Errorf("%w: not leading", ErrNotCommitted)
		case !now.Before(w.deadline):
			w.done <- fmt.Errorf("%w: no majority acknowledged it in time", ErrNotCommitted)
		case e.node.Committed(now, w.ver):
			w.done <- nil
		default:
			keep = append(keep, w)
		}
	}
	clear(e.waiting[len(keep):])
	e.waiting = keep
}

// failCommits answers every waiting Commit with err (Run returning).
func (e *Elector) failCommits(err error) {
	for _, w := range e.waiting {
		w.done <- err
	}
	e.waiting = nil
}
