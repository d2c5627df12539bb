package election

import "context"

// Elector decides whether this node leads. Every mode (static, env, udp)
// implements it, so the job runner and the CLI work with any of them.
type Elector interface {
	// Run takes part in the election until ctx is done, reporting every
	// change of leadership through cb (see Callbacks for the ordering
	// guarantees). When ctx is done a leader steps down cleanly, telling its
	// peers when the mode has any, cb.OnStoppedLeading is called, and Run
	// returns nil. Run returns an error only if the elector cannot start or
	// fails for good. Run may be called once.
	Run(ctx context.Context, cb Callbacks) error

	// Status returns a snapshot of this node's view. It is safe to call
	// from any goroutine, before, during and after Run.
	Status() Status
}
