package trigger

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every op a client sends today is safe to send again; an op added later
// is sent once until Repeatable says why a copy is safe.
func TestRequestRepeatable(t *testing.T) {
	for _, op := range []Op{OpTicket, OpStatus, OpRun} {
		assert.True(t, Request{Op: op}.Repeatable(), "op %d", op)
	}
	assert.False(t, Request{Op: 99}.Repeatable())
}

// RunJob and Status hand Send each request's Repeatable, so the transport
// resends exactly the requests that are safe to repeat.
func TestClientResendsWhatIsRepeatable(t *testing.T) {
	h := &Handler{Runner: &fakeRunner{}}
	var ops []Op
	send := func(_ context.Context, p []byte, repeat bool) ([]byte, bool, error) {
		r, err := DecodeRequest(p)
		require.NoError(t, err)
		ops = append(ops, r.Op)
		assert.Equal(t, r.Repeatable(), repeat, "op %d", r.Op)
		return h.Handle(Sender{}, p), true, nil
	}
	_, err := RunJob(context.Background(), send, "job")
	require.NoError(t, err)
	_, err = Status(context.Background(), send, "r1")
	require.NoError(t, err)
	assert.Equal(t, []Op{OpTicket, OpRun, OpStatus}, ops)
}

// The run request was resent (its first answer lost) and the answer came
// from a leader that does not know the ticket: the first send may have
// started the run on the leader that issued it, so RunJob asks for no new
// ticket, which would start a second run, and says the outcome is unknown.
// The deposed leader that issued the ticket ran the job; the new one never
// runs it.
func TestRunJobAsksNoNewTicketAfterAStaleAnswerToAResend(t *testing.T) {
	deposed, next := &fakeRunner{}, &fakeRunner{}
	issuer, successor := &Handler{Runner: deposed}, &Handler{Runner: next}
	var ops []Op
	send := func(_ context.Context, p []byte, _ bool) ([]byte, bool, error) {
		r, err := DecodeRequest(p)
		require.NoError(t, err)
		ops = append(ops, r.Op)
		switch {
		case r.Op == OpTicket && len(ops) == 1:
			return issuer.Handle(Sender{}, p), true, nil
		case r.Op == OpRun && len(ops) == 2:
			issuer.Handle(Sender{}, p) // the first send runs; its answer is lost
			return successor.Handle(Sender{}, p), false, nil
		}
		return successor.Handle(Sender{}, p), true, nil
	}
	a, err := RunJob(context.Background(), send, "job")
	require.ErrorIs(t, err, ErrMayHaveRun)
	assert.Equal(t, Stale, a.Code)
	assert.Equal(t, []Op{OpTicket, OpRun}, ops, "no second ticket")
	assert.Equal(t, []string{"job"}, deposed.started)
	assert.Empty(t, next.started)
}
