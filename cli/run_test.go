package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunStaticRunsJob runs `lanleader run --mode=static` as the leader
// with a job due every second, reads its JSON log through a pipe, stops it
// (as SIGTERM would, through ctx) as soon as the job's output appears, and
// checks the run's LANLEADER_* environment and the clean exit.
func TestRunStaticRunsJob(t *testing.T) {
	type logLine struct {
		Msg         string    `json:"msg"`
		Node        string    `json:"node"`
		Job         string    `json:"job"`
		RunID       string    `json:"run_id"`
		Term        uint64    `json:"term"`
		ScheduledAt time.Time `json:"scheduled_at"`
		Line        string    `json:"line"`
	}
	var started, output *logLine
	var msgs []string
	// The 30 s guard is not a wait: the job is due within a second.
	code := runStaticLeader(t, "testdata/fast.yaml", nil, func(b []byte, stop func()) {
		l := decodeLogLine[logLine](t, b)
		msgs = append(msgs, l.Msg)
		switch {
		case l.Msg == "jobs: run started" && started == nil:
			started = &l
		case l.Msg == "jobs: output" && output == nil:
			output = &l
			stop()
		}
	})

	require.NotNil(t, started, "no run started before the guard expired; log: %v", msgs)
	require.NotNil(t, output, "the job printed nothing; log: %v", msgs)
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, msgs, "became leader")
	assert.Equal(t, "lanleader stopped", msgs[len(msgs)-1], "a stop through ctx is a clean shutdown")

	assert.Equal(t, "fast", output.Job)
	assert.Equal(t, started.RunID, output.RunID)
	m := regexp.MustCompile(`^job=(\S*) node=(\S*) term=(\S*) at=(\S*) run=(\S*)$`).FindStringSubmatch(output.Line)
	require.NotNil(t, m, "job output %q", output.Line)
	assert.Equal(t, "fast", m[1], "LANLEADER_JOB")
	assert.Equal(t, "alpha", m[2], "LANLEADER_NODE")
	term, err := strconv.ParseUint(m[3], 10, 64)
	require.NoError(t, err, "LANLEADER_TERM %q", m[3])
	assert.Equal(t, started.Term, term, "LANLEADER_TERM is the run's term")
	at, err := time.Parse(time.RFC3339, m[4])
	require.NoError(t, err, "LANLEADER_SCHEDULED_AT %q", m[4])
	assert.True(t, at.Equal(started.ScheduledAt), "LANLEADER_SCHEDULED_AT %v is the scheduled instant %v", at, started.ScheduledAt)
	assert.Zero(t, at.Nanosecond(), "a '* * * * * *' instant is a whole second")
	assert.True(t, strings.HasSuffix(m[4], "Z"), "LANLEADER_SCHEDULED_AT %q is in UTC", m[4])
	assert.Equal(t, started.RunID, m[5], "LANLEADER_RUN_ID")
}

// TestRunStopEndsRunsBeforeResign: a stop ends the runs (here one that
// ignores SIGTERM, killed after kill_grace) while this node still leads,
// and only then leaves the election, so no successor could start the job
// beside it.
func TestRunStopEndsRunsBeforeResign(t *testing.T) {
	type logLine struct {
		Msg     string `json:"msg"`
		Line    string `json:"line"`
		Outcome string `json:"outcome"`
	}
	var lines []logLine
	code := runStaticLeader(t, "testdata/stubborn.yaml", nil, func(b []byte, stop func()) {
		l := decodeLogLine[logLine](t, b)
		lines = append(lines, l)
		if l.Msg == "jobs: output" && l.Line == "started" {
			stop()
		}
	})
	assert.Equal(t, ExitOK, code)
	at := func(msg string) int {
		for i, l := range lines {
			if l.Msg == msg {
				return i
			}
		}
		t.Fatalf("no %q in the log: %v", msg, lines)
		return -1
	}
	finished, stopped := at("jobs: run finished"), at("stopped leading")
	assert.Less(t, finished, stopped, "the run ended before leadership did")
	assert.Equal(t, "cancelled", lines[finished].Outcome)
}

// TestRunStopGraceCountsFromTheStop: a node that has run longer than
// --stop-grace still lets a finish-policy run end at stop.
func TestRunStopGraceCountsFromTheStop(t *testing.T) {
	type logLine struct {
		Msg     string `json:"msg"`
		Line    string `json:"line"`
		Outcome string `json:"outcome"`
	}
	start := time.Now()
	var last logLine
	stopping := false
	code := runStaticLeader(t, "testdata/finisher.yaml", []string{"--stop-grace", "3s"}, func(b []byte, stop func()) {
		l := decodeLogLine[logLine](t, b)
		if !stopping && l.Msg == "jobs: output" && l.Line == "started" && time.Since(start) > 3500*time.Millisecond {
			stopping = true
			stop()
		}
		if stopping && l.Msg == "jobs: run finished" {
			last = l
		}
	})
	assert.Equal(t, ExitOK, code)
	assert.Equal(t, "ok", last.Outcome, "the run was let finish")
}

// runStaticLeader runs `lanleader run --mode=static` as the leader "alpha"
// with config and the extra flags, its log in JSON through a pipe, and
// calls each with every log line until the process exits; stop ends it as
// SIGTERM would (through ctx). A 30 s guard bounds the run. It returns the
// exit code.
func runStaticLeader(t *testing.T, config string, extra []string, each func(line []byte, stop func())) int {
	t.Helper()
	guard, cancelGuard := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelGuard()
	ctx, stop := context.WithCancel(guard)
	defer stop()
	pr, pw := io.Pipe()
	defer pr.Close() // a failed require must not leave runMain blocked writing
	exit := make(chan int, 1)
	args := append([]string{"run", "--mode=static", "--node-id", "alpha", "--leader", "alpha",
		"--config", config, "--http=", "--log-format", "json"}, extra...)
	go func() {
		code := Execute(ctx, args, io.Discard, pw)
		pw.Close()
		exit <- code
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		each(sc.Bytes(), stop)
	}
	require.NoError(t, sc.Err())
	return <-exit
}

// decodeLogLine decodes one JSON log line into T; anything else fails t.
func decodeLogLine[T any](t *testing.T, b []byte) T {
	t.Helper()
	var l T
	require.NoError(t, json.Unmarshal(b, &l), "not a JSON log line: %s", b)
	return l
}
