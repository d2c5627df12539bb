package trigger

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/jobs"
)

type fakeRunner struct {
	started []string
	err     error
	runs    map[string]jobs.RunRecord
}

func (f *fakeRunner) Trigger(name string) (jobs.RunRecord, error) {
	if f.err != nil {
		return jobs.RunRecord{}, f.err
	}
	f.started = append(f.started, name)
	return jobs.RunRecord{Job: name, RunID: fmt.Sprintf("r%d", len(f.started)), Manual: true}, nil
}

func (f *fakeRunner) RunByID(id string) (jobs.RunRecord, bool) {
	r, ok := f.runs[id]
	return r, ok
}

func req(t *testing.T, r Request) []byte {
	b, err := r.Encode()
	require.NoError(t, err)
	return append(b, make([]byte, 40)...) // the protocol pads requests
}

// ticket asks h for a ticket for job.
func ticket(t *testing.T, h *Handler, job string) uint64 {
	t.Helper()
	a, err := DecodeAnswer(h.Handle(Sender{}, req(t, Request{Op: OpTicket, Name: job})))
	require.NoError(t, err)
	require.Equal(t, Ticket, a.Code)
	require.NotZero(t, a.Ticket)
	return a.Ticket
}

func run(t *testing.T, h *Handler, tk uint64, job string) Code {
	t.Helper()
	return runAnswer(t, h, tk, job).Code
}

func runAnswer(t *testing.T, h *Handler, tk uint64, job string) Answer {
	t.Helper()
	a, err := DecodeAnswer(h.Handle(Sender{}, req(t, Request{Op: OpRun, Ticket: tk, Name: job})))
	require.NoError(t, err)
	return a
}

// A run request runs the job only with a ticket this Handler issued for
// that job, once, within TicketLifetime by its own clock.
func TestHandlerTickets(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := &fakeRunner{}
	h := &Handler{Runner: f, Now: func() time.Time { return now }}

	tk := ticket(t, h, "job")
	assert.Equal(t, Started, run(t, h, tk, "job"))
	assert.Equal(t, Answer{Code: Started, RunID: "r1"}, runAnswer(t, h, tk, "job"), "a ticket runs once; a repeat gets its run")
	assert.Equal(t, Stale, run(t, h, tk, "other"), "a used ticket, with another job's name")

	assert.Equal(t, Stale, run(t, h, 0, "job"), "no ticket")
	assert.Equal(t, Stale, run(t, h, tk+1, "job"), "a ticket never issued")
	assert.Equal(t, Stale, run(t, h, ticket(t, h, "other"), "job"), "a ticket for another job")

	old := ticket(t, h, "job")
	now = now.Add(TicketLifetime)
	assert.Equal(t, Stale, run(t, h, old, "job"), "an expired ticket")

	fresh := ticket(t, h, "job")
	now = now.Add(TicketLifetime - time.Millisecond)
	assert.Equal(t, Started, run(t, h, fresh, "job"), "a ticket within its lifetime")
	assert.Equal(t, []string{"job", "job"}, f.started)
}

// A run request is idempotent by its ticket, like an Idempotency-Key: the
// leader decides a ticket once, and every request that carries it again (a
// client resending after a lost answer) gets that decision and starts
// nothing, for TicketLifetime after the decision.
func TestHandlerAnswersARepeatWithItsTicketsDecision(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := &fakeRunner{}
	h := &Handler{Runner: f, Now: func() time.Time { return now }}

	tk := ticket(t, h, "job")
	now = now.Add(TicketLifetime - time.Millisecond)
	started := runAnswer(t, h, tk, "job")
	require.Equal(t, Answer{Code: Started, RunID: "r1"}, started)
	now = now.Add(TicketLifetime - time.Millisecond)
	assert.Equal(t, started, runAnswer(t, h, tk, "job"), "kept for TicketLifetime after the decision")
	now = now.Add(time.Millisecond)
	assert.Equal(t, Stale, run(t, h, tk, "job"), "and no longer")
	assert.Equal(t, []string{"job"}, f.started, "one run")

	// A refusal is a decision too: a repeat that comes once the runner
	// would start the job is refused the same way, so the client that
	// heard the refusal and the leader agree.
	for err, want := range map[error]Code{jobs.ErrUnknownJob: UnknownJob, jobs.ErrOverlap: Busy, jobs.ErrNotLeading: NotLeading} {
		f.err = err
		tk := ticket(t, h, "job")
		first := runAnswer(t, h, tk, "job")
		require.Equal(t, want, first.Code)
		f.err = nil
		assert.Equal(t, first, runAnswer(t, h, tk, "job"), "%v: the repeat gets the refusal", err)
	}
	assert.Equal(t, []string{"job"}, f.started, "the refused tickets ran nothing")
}

// Issuing past maxTickets forgets the oldest ticket: it runs nothing, and
// the newest still does.
func TestHandlerForgetsTheOldestTicket(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := &fakeRunner{}
	h := &Handler{Runner: f, Now: func() time.Time { return now }}
	first := ticket(t, h, "job")
	var last uint64
	for range maxTickets {
		now = now.Add(time.Millisecond)
		last = ticket(t, h, "job")
	}
	assert.Equal(t, Stale, run(t, h, first, "job"))
	assert.Equal(t, Started, run(t, h, last, "job"))
}

// A run request captured and replayed to the leader after it restarted
// (a new process, a new Handler) runs nothing, however far the client's
// clock was off: the request carries a ticket, not a clock, and the new
// process never issued it. With the clock-based check this replaced, a
// client 20 s ahead and a leader restarted 10 s after the request ran the
// job twice.
func TestReplayToARestartedLeaderRunsNothing(t *testing.T) {
	first := &fakeRunner{}
	h := &Handler{Runner: first}
	var captured [][]byte
	send := func(_ context.Context, p []byte, _ bool) ([]byte, bool, error) {
		captured = append(captured, p)
		return h.Handle(Sender{}, p), true, nil
	}
	a, err := RunJob(context.Background(), send, "job")
	require.NoError(t, err)
	require.Equal(t, Started, a.Code)
	require.Len(t, captured, 2, "a ticket request, then the run request")

	for _, p := range captured {
		h.Handle(Sender{}, p)
	}
	assert.Len(t, first.started, 1, "replayed to the same process")

	restarted := &fakeRunner{}
	h2 := &Handler{Runner: restarted}
	for _, p := range captured {
		h2.Handle(Sender{}, p)
	}
	assert.Empty(t, restarted.started, "replayed to the restarted leader")
}

// RunJob asks for a new ticket once when the leader does not know the
// first in its answer to the run request's first send (leadership changed
// between the two requests): nothing ran, so asking again cannot run the
// job twice.
func TestRunJobAsksAgainForAnUnknownTicket(t *testing.T) {
	f := &fakeRunner{}
	old, cur := &Handler{Runner: &fakeRunner{}}, &Handler{Runner: f}
	calls := 0
	send := func(_ context.Context, p []byte, _ bool) ([]byte, bool, error) {
		calls++
		if calls == 1 {
			return old.Handle(Sender{}, p), true, nil // the ticket of the leader deposed next
		}
		return cur.Handle(Sender{}, p), true, nil
	}
	a, err := RunJob(context.Background(), send, "job")
	require.NoError(t, err)
	assert.Equal(t, Started, a.Code)
	assert.Equal(t, 4, calls)
	assert.Len(t, f.started, 1)

	// Two leaders that never know the ticket: RunJob gives up, nothing ran.
	calls = 0
	stale := func(_ context.Context, p []byte, _ bool) ([]byte, bool, error) {
		calls++
		if r, _ := DecodeRequest(p); r.Op == OpTicket {
			return (&Handler{}).Handle(Sender{}, p), true, nil
		}
		return cur.Handle(Sender{}, p), true, nil
	}
	a, err = RunJob(context.Background(), stale, "job")
	require.NoError(t, err)
	assert.Equal(t, Stale, a.Code)
	assert.Equal(t, 4, calls)
	assert.Len(t, f.started, 1)

	// No answer to the ticket request: nothing ran, and the error says so.
	_, err = RunJob(context.Background(), func(context.Context, []byte, bool) ([]byte, bool, error) {
		return nil, false, context.DeadlineExceeded
	}, "job")
	assert.ErrorIs(t, err, ErrNothingRan)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestHandlerAnswers(t *testing.T) {
	f := &fakeRunner{runs: map[string]jobs.RunRecord{
		"run": {RunID: "run", Outcome: jobs.OutcomeRunning},
		"end": {RunID: "end", Outcome: jobs.OutcomeFailed, ExitCode: 3, Error: "exit status 3"},
	}}
	h := &Handler{Runner: f}
	a, _ := DecodeAnswer(h.Handle(Sender{}, req(t, Request{Op: OpStatus, Name: "run"})))
	assert.Equal(t, Running, a.Code)
	a, _ = DecodeAnswer(h.Handle(Sender{}, req(t, Request{Op: OpStatus, Name: "end"})))
	assert.Equal(t, Answer{Code: Finished, RunID: "end", Outcome: jobs.OutcomeFailed, ExitCode: 3, Message: "exit status 3"}, a,
		"status needs no ticket: it runs nothing")
	a, _ = DecodeAnswer(h.Handle(Sender{}, req(t, Request{Op: OpStatus, Name: "gone"})))
	assert.Equal(t, UnknownRun, a.Code)
	for err, want := range map[error]Code{jobs.ErrUnknownJob: UnknownJob, jobs.ErrOverlap: Busy, jobs.ErrNotLeading: NotLeading} {
		f.err = err
		assert.Equal(t, want, run(t, h, ticket(t, h, "j"), "j"), err.Error())
	}
	v1 := []byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'j'}
	a, _ = DecodeAnswer(h.Handle(Sender{}, v1))
	assert.Equal(t, BadRequest, a.Code)
	assert.Contains(t, a.Message, "older than this leader", "a version 1 request (the client's clock) is refused, saying why")
	for _, bad := range [][]byte{nil, {9}, {2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'x'}, append(req(t, Request{Op: OpRun, Name: "j"}), 1)} {
		a, _ = DecodeAnswer(h.Handle(Sender{}, bad))
		assert.Equal(t, BadRequest, a.Code, "%v", bad)
	}
}

func TestCodecRoundTrip(t *testing.T) {
	for _, a := range []Answer{
		{Code: Finished, RunID: "0123456789abcdef", Outcome: jobs.OutcomeOK, ExitCode: -1, Message: "m"},
		{Code: Ticket, Ticket: 0xfedcba9876543210},
		{Code: Ticket, Ticket: 1},
	} {
		got, err := DecodeAnswer(a.Encode())
		require.NoError(t, err)
		assert.Equal(t, a, got)
	}
	r := Request{Op: OpRun, Ticket: 0x0102030405060708, Name: "backup"}
	got, err := DecodeRequest(req(t, r))
	require.NoError(t, err)
	assert.Equal(t, r, got)
	long := Answer{Code: NotLeading, Message: string(make([]byte, 500))}
	assert.LessOrEqual(t, len(long.Encode()), 6+maxName+maxMessage+1)
	_, err = Request{Op: OpRun, Name: ""}.Encode()
	assert.Error(t, err)
	_, err = Request{Op: OpRun, Name: string(make([]byte, maxName+1))}.Encode()
	assert.Error(t, err)
	for _, b := range [][]byte{nil, {1}, {1, 1, 0, 0, 0, 0, 0, 0, 0}, {2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		(&Answer{Code: Finished, RunID: "x"}).Encode()[:0], append([]byte{1, byte(Ticket), 0, 0, 0, 3}, "abc\x00"...)} {
		_, err := DecodeAnswer(b)
		assert.Error(t, err, "%v", b)
	}
}
