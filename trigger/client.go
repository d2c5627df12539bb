package trigger

import (
	"context"
	"errors"
	"fmt"
)

// Send sends one request payload to the cluster's leader and returns the
// payload of its answer (the CLI: udp.Request). With repeat it sends the
// request again, as a fresh request, while no answer came (udp.Resend);
// without, once. first reports whether the answer is to the first send.
type Send func(ctx context.Context, payload []byte, repeat bool) (answer []byte, first bool, err error)

// ErrNothingRan wraps the error of a ticket request that got no answer:
// no run was requested, so nothing can have run.
var ErrNothingRan = errors.New("no ticket: no run was requested")

// ErrMayHaveRun is RunJob's error when the run request was sent more than
// once and the answer came from a leader that does not know its ticket (a
// leader that took over or restarted since, or an older leader that used
// tickets once): an earlier send may have started the run and its answer
// been lost, so RunJob asks for no new ticket.
var ErrMayHaveRun = errors.New("the leader that answered a resent run request does not know its ticket: an earlier send may have started the run")

// RunJob asks the leader for one manual run of job: a ticket (OpTicket),
// then the run with it (OpRun), each sent again while no answer comes
// (Request.Repeatable). If the leader does not know the ticket when it
// answers the run request's first send (leadership changed or the leader
// restarted between the two), nothing ran and RunJob asks once more with a
// new ticket; when it answers a resend, RunJob returns ErrMayHaveRun. It
// returns the answer to the run request; an error wrapping ErrNothingRan
// means the ticket request got no answer.
func RunJob(ctx context.Context, send Send, job string) (Answer, error) {
	var a Answer
	for range 2 {
		t, _, err := ask(ctx, send, Request{Op: OpTicket, Name: job})
		switch {
		case err != nil:
			return Answer{}, fmt.Errorf("%w: %w", ErrNothingRan, err)
		case t.Code != Ticket:
			return t, nil
		}
		var first bool
		a, first, err = ask(ctx, send, Request{Op: OpRun, Ticket: t.Ticket, Name: job})
		switch {
		case err != nil || a.Code != Stale:
			return a, err
		case !first:
			return a, ErrMayHaveRun
		}
	}
	return a, nil
}

// Status asks the leader how the run with id runID is doing.
func Status(ctx context.Context, send Send, runID string) (Answer, error) {
	a, _, err := ask(ctx, send, Request{Op: OpStatus, Name: runID})
	return a, err
}

// ask sends r, again while no answer comes if r is Repeatable, and returns
// the answer and whether it is to the first send.
func ask(ctx context.Context, send Send, r Request) (Answer, bool, error) {
	p, err := r.Encode()
	if err != nil {
		return Answer{}, false, err
	}
	b, first, err := send(ctx, p, r.Repeatable())
	if err != nil {
		return Answer{}, false, err
	}
	a, err := DecodeAnswer(b)
	return a, first, err
}
