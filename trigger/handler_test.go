package trigger

import (
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
	return jobs.RunRecord{Job: name, RunID: "r1", Manual: true}, nil
}

func (f *fakeRunner) RunByID(id string) (jobs.RunRecord, bool) {
	r, ok := f.runs[id]
	return r, ok
}

func req(t *testing.T, op Op, sent time.Time, name string) []byte {
	b, err := Request{Op: op, Sent: sent, Name: name}.Encode()
	require.NoError(t, err)
	return append(b, make([]byte, 40)...) // the protocol pads requests
}

func TestHandlerFreshness(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := &fakeRunner{}
	h := &Handler{Runner: f, Started: now.Add(-time.Minute), Now: func() time.Time { return now }}
	for name, tc := range map[string]struct {
		sent time.Time
		want Code
	}{
		"fresh":                    {now.Add(-time.Second), Started},
		"client clock a bit ahead": {now.Add(5 * time.Second), Started},
		"older than MaxAge":        {now.Add(-MaxAge - time.Second), Stale},
		"far in the future":        {now.Add(MaxAge + time.Second), Stale},
		"before this node started": {now.Add(-61 * time.Second), Stale},
	} {
		a, err := DecodeAnswer(h.Handle(req(t, OpRun, tc.sent, "job")))
		require.NoError(t, err)
		assert.Equal(t, tc.want, a.Code, name)
	}
	assert.Len(t, f.started, 2, "only the fresh requests ran")

	h.Started = now // a node that just started refuses what it cannot have seen
	a, _ := DecodeAnswer(h.Handle(req(t, OpRun, now.Add(-time.Second), "job")))
	assert.Equal(t, Stale, a.Code)
}

func TestHandlerAnswers(t *testing.T) {
	now := time.Now()
	f := &fakeRunner{runs: map[string]jobs.RunRecord{
		"run": {RunID: "run", Outcome: jobs.OutcomeRunning},
		"end": {RunID: "end", Outcome: jobs.OutcomeFailed, ExitCode: 3, Error: "exit status 3"},
	}}
	h := &Handler{Runner: f, Started: now.Add(-time.Hour)}
	a, _ := DecodeAnswer(h.Handle(req(t, OpStatus, now, "run")))
	assert.Equal(t, Running, a.Code)
	a, _ = DecodeAnswer(h.Handle(req(t, OpStatus, now.Add(-time.Hour), "end")))
	assert.Equal(t, Answer{Code: Finished, RunID: "end", Outcome: jobs.OutcomeFailed, ExitCode: 3, Message: "exit status 3"}, a,
		"status needs no freshness: it runs nothing")
	a, _ = DecodeAnswer(h.Handle(req(t, OpStatus, now, "gone")))
	assert.Equal(t, UnknownRun, a.Code)
	for err, want := range map[error]Code{jobs.ErrUnknownJob: UnknownJob, jobs.ErrOverlap: Busy, jobs.ErrNotLeading: NotLeading} {
		f.err = err
		a, _ = DecodeAnswer(h.Handle(req(t, OpRun, now, "j")))
		assert.Equal(t, want, a.Code, err.Error())
	}
	for _, bad := range [][]byte{nil, {9}, {1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'x'}, append(req(t, OpRun, now, "j"), 1)} {
		a, _ = DecodeAnswer(h.Handle(bad))
		assert.Equal(t, BadRequest, a.Code, "%v", bad)
	}
}

func TestCodecRoundTrip(t *testing.T) {
	a := Answer{Code: Finished, RunID: "0123456789abcdef", Outcome: jobs.OutcomeOK, ExitCode: -1, Message: "m"}
	got, err := DecodeAnswer(a.Encode())
	require.NoError(t, err)
	assert.Equal(t, a, got)
	long := Answer{Code: NotLeading, Message: string(make([]byte, 500))}
	assert.LessOrEqual(t, len(long.Encode()), 6+maxName+maxMessage+1)
	_, err = Request{Op: OpRun, Name: ""}.Encode()
	assert.Error(t, err)
	_, err = Request{Op: OpRun, Name: string(make([]byte, maxName+1))}.Encode()
	assert.Error(t, err)
	for _, b := range [][]byte{nil, {1}, {1, 1, 0, 0, 0, 0, 0, 0, 0}, {2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}} {
		_, err := DecodeAnswer(b)
		assert.Error(t, err)
	}
}
