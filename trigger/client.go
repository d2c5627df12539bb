package trigger

import (
	"context"
	"errors"
	"fmt"
)

// Send sends one request payload to the cluster's leader and returns the
// payload of its answer (the CLI: udp.Request).
type Send func(ctx context.Context, payload []byte) ([]byte, error)

// ErrNothingRan wraps the error of a ticket request that got no answer:
// no run request was sent, so nothing can have run.
var ErrNothingRan = errors.New("no ticket: no run was requested")

// RunJob asks the leader for one manual run of job: a ticket (OpTicket),
// then the run with it (OpRun). If the leader does not know the ticket
// (leadership changed or the leader restarted between the two), nothing
// ran and RunJob asks once more with a new ticket. It returns the answer to
// the run request; an error wrapping ErrNothingRan means the ticket request
// got no answer.
func RunJob(ctx context.Context, send Send, job string) (Answer, error) {
	var a Answer
	for range 2 {
		t, err := ask(ctx, send, Request{Op: OpTicket, Name: job})
		switch {
		case err != nil:
			return Answer{}, fmt.Errorf("%w: %w", ErrNothingRan, err)
		case t.Code != Ticket:
			return t, nil
		}
		if a, err = ask(ctx, send, Request{Op: OpRun, Ticket: t.Ticket, Name: job}); err != nil || a.Code != Stale {
			return a, err
		}
	}
	return a, nil
}

// Status asks the leader how the run with id runID is doing.
func Status(ctx context.Context, send Send, runID string) (Answer, error) {
	return ask(ctx, send, Request{Op: OpStatus, Name: runID})
}

func ask(ctx context.Context, send Send, r Request) (Answer, error) {
	p, err := r.Encode()
	if err != nil {
		return Answer{}, err
	}
	b, err := send(ctx, p)
	if err != nil {
		return Answer{}, err
	}
	return DecodeAnswer(b)
}
