// Package electiontest helps test Electors: a Recorder writes down every
// leadership callback in order, in a compact form tests compare directly.
package electiontest

import (
	"context"
	"fmt"

	"github.com/lanleader/lanleader/election"
)

// Recorder records callbacks as "new:ID/TERM", "start:TERM" and
// "stop(ctx cancelled=BOOL)", the last saying whether the leadership
// context was already cancelled when OnStoppedLeading ran. It is not safe
// for concurrent use; Electors call callbacks one at a time.
type Recorder struct {
	// Events are the callbacks so far, oldest first.
	Events []string
	// Ctx is the context of the last OnStartedLeading, nil before one.
	Ctx context.Context
}

// Callbacks returns callbacks that record into r.
func (r *Recorder) Callbacks() election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: func(ctx context.Context, term uint64) {
			r.Ctx = ctx
			r.Events = append(r.Events, fmt.Sprintf("start:%d", term))
		},
		OnStoppedLeading: func() {
			r.Events = append(r.Events, fmt.Sprintf("stop(ctx cancelled=%t)", r.Ctx.Err() != nil))
		},
		OnNewLeader: func(l election.LeaderInfo) {
			r.Events = append(r.Events, fmt.Sprintf("new:%s/%d", l.ID, l.Term))
		},
	}
}
