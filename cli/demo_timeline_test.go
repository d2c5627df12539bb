package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDemoLine(t *testing.T) {
	now := time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC)
	at := time.Date(2026, 11, 30, 20, 0, 1, 500, time.UTC)
	sched := time.Date(2026, 11, 30, 20, 0, 2, 0, time.UTC)
	tests := []struct {
		name string
		line string
		want demoEvent
	}{
		{"became leader", `{"time":"2026-11-30T20:00:01.0000005Z","level":"INFO","msg":"became leader","node":"n1","term":7}`,
			demoEvent{kind: evBecameLeader, at: at, term: 7}},
		{"stopped leading", `{"time":"2026-11-30T20:00:01.0000005Z","level":"INFO","msg":"stopped leading","node":"n1"}`,
			demoEvent{kind: evStoppedLeading, at: at}},
		{"follows", `{"time":"2026-11-30T20:00:01.0000005Z","level":"INFO","msg":"leader changed","leader":"n2","addr":"127.0.0.1:1","term":9,"self":false}`,
			demoEvent{kind: evLeaderChanged, at: at, leader: "n2", term: 9}},
		{"lost leader", `{"time":"2026-11-30T20:00:01.0000005Z","level":"INFO","msg":"leader changed","leader":"","term":0}`,
			demoEvent{kind: evLeaderChanged, at: at}},
		{"run started", `{"time":"2026-11-30T20:00:01.0000005Z","level":"INFO","msg":"jobs: run started","job":"tick","run_id":"ab","attempt":1,"scheduled_at":"2026-11-30T20:00:02Z","term":3}`,
			demoEvent{kind: evRunStarted, at: at, job: "tick", runID: "ab", scheduled: sched, term: 3}},
		{"output", `{"time":"2026-11-30T20:00:01.0000005Z","level":"INFO","msg":"jobs: output","job":"tick","run_id":"ab","stream":"stdout","line":"hi"}`,
			demoEvent{kind: evOutput, at: at, job: "tick", runID: "ab", text: "hi"}},
		{"misfire run", `{"time":"2026-11-30T20:00:01.0000005Z","level":"INFO","msg":"` + misfireRunMsg + `","job":"tick","term":4,"scheduled_at":"2026-11-30T20:00:02Z"}`,
			demoEvent{kind: evMisfireRun, at: at, job: "tick", scheduled: sched, term: 4}},
		{"instants overtaken", `{"time":"2026-11-30T20:00:01.0000005Z","level":"WARN","msg":"jobs: instants overtaken by a later one; skipped","job":"tick","from":"2026-11-30T20:00:02Z","count":2,"later":"2026-11-30T20:00:04Z"}`,
			demoEvent{kind: evSkipped, at: at, job: "tick", first: sched, scheduled: sched.Add(time.Second),
				text: "overtaken by a later instant: misfire run-once runs only the latest of the instants missed in a row"}},
		{"warning with err", `{"time":"2026-11-30T20:00:01.0000005Z","level":"WARN","msg":"send failed","err":"boom"}`,
			demoEvent{kind: evProblem, at: at, text: "send failed: boom"}},
		{"routine info", `{"time":"2026-11-30T20:00:01.0000005Z","level":"INFO","msg":"udp transport up"}`,
			demoEvent{kind: evIgnored, at: at}},
		{"not JSON", `lanleader run: udp: bind 127.0.0.1:1: address already in use`,
			demoEvent{kind: evProblem, at: now, text: "lanleader run: udp: bind 127.0.0.1:1: address already in use"}},
		{"JSON without msg", `{"a":1}`, demoEvent{kind: evProblem, at: now, text: `{"a":1}`}},
		{"blank", "  ", demoEvent{kind: evIgnored, at: now}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseDemoLine([]byte(tt.line), now)
			assert.Equal(t, tt.want.kind, got.kind)
			assert.True(t, tt.want.at.Equal(got.at), "at: want %v, got %v", tt.want.at, got.at)
			assert.True(t, tt.want.scheduled.Equal(got.scheduled), "scheduled: want %v, got %v", tt.want.scheduled, got.scheduled)
			assert.True(t, tt.want.first.Equal(got.first), "first: want %v, got %v", tt.want.first, got.first)
			tt.want.at, tt.want.scheduled, got.at, got.scheduled = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			tt.want.first, got.first = time.Time{}, time.Time{}
			assert.Equal(t, tt.want, got)
		})
	}
}

// demoScript builds a timeline's input: events at offsets from t0.
type demoScript struct {
	t0 time.Time
	tl *demoTimeline
}

func newDemoScript() (*demoScript, *bytes.Buffer) {
	var out bytes.Buffer
	t0 := time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC)
	return &demoScript{t0: t0, tl: newDemoTimeline(&out, t0)}, &out
}

func (s *demoScript) at(ms int) time.Time { return s.t0.Add(time.Duration(ms) * time.Millisecond) }

func (s *demoScript) ev(ms int, node string, kind demoEventKind, f func(*demoEvent)) {
	ev := demoEvent{kind: kind, node: node, at: s.at(ms)}
	if f != nil {
		f(&ev)
	}
	s.tl.apply(ev)
}

func (s *demoScript) lead(ms int, node string, term uint64) {
	s.ev(ms, node, evBecameLeader, func(e *demoEvent) { e.term = term })
}

func (s *demoScript) follow(ms int, node, leader string) {
	s.ev(ms, node, evLeaderChanged, func(e *demoEvent) { e.leader = leader })
}

func (s *demoScript) run(ms int, node, id string, sec int) {
	s.ev(ms, node, evRunStarted, func(e *demoEvent) {
		e.job, e.runID, e.scheduled = "tick", id, s.t0.Add(time.Duration(sec)*time.Second)
	})
}

func TestDemoTimelineFailoverRejoinAndRuns(t *testing.T) {
	s, out := newDemoScript()
	for _, n := range []string{"n1", "n2", "n3"} {
		s.tl.started(s.at(0), n, 100, "127.0.0.1:1", false)
	}
	s.lead(600, "n1", 1)
	s.follow(600, "n2", "n1")
	s.follow(600, "n3", "n1")
	s.run(1000, "n1", "r1", 1)
	s.run(2000, "n1", "r2", 2)

	s.tl.killed(s.at(2500), "n1")
	assert.Empty(t, s.tl.leader, "a killed leader leads no more")
	s.tl.exited(s.at(2501), "n1", errors.New("signal: killed"), true)
	s.follow(3000, "n2", "")
	s.lead(3100, "n2", 2)
	s.run(3100, "n2", "r3", 3) // the instant in the gap, run once
	s.tl.started(s.at(4500), "n1", 101, "127.0.0.1:1", true)
	s.follow(4600, "n1", "n2")

	sum := s.tl.summary(s.at(5000))
	require.Len(t, sum.Failovers, 1)
	assert.Equal(t, demoFailover{Killed: "n1", By: "n2", Term: 2, KilledAt: s.at(2500), Took: 600 * time.Millisecond}, sum.Failovers[0])
	assert.Equal(t, 1, sum.Kills)
	assert.Equal(t, 1, sum.Restarts)
	assert.Equal(t, 1, sum.RejoinedFollower)
	assert.Equal(t, map[string]int{"n1": 2, "n2": 1}, sum.RunsPerNode)
	assert.Equal(t, 3, sum.Instants)
	assert.Empty(t, sum.Missed)
	assert.Empty(t, sum.Duplicates)
	assert.Empty(t, sum.Unexpected)
	assert.Equal(t, 5*time.Second, sum.Elapsed)
	assert.Equal(t, "n2", s.tl.leader)

	text := out.String()
	assert.Contains(t, text, "killed n1 (leader)")
	assert.Contains(t, text, "became leader (term 2) — failover 600ms after n1 was killed")
	assert.Contains(t, text, "lost leader n1")
	assert.Contains(t, text, "rejoined as a follower of n2")
}

func TestDemoTimelineDuplicateInstant(t *testing.T) {
	s, out := newDemoScript()
	s.lead(0, "n1", 1)
	s.run(1000, "n1", "r1", 1)
	s.lead(1200, "n2", 2) // a second leader, as in a split brain
	s.run(1300, "n2", "r2", 1)
	s.run(2000, "n2", "r3", 2)
	s.run(5000, "n2", "r4", 5)

	sum := s.tl.summary(s.at(6000))
	assert.Equal(t, 3, sum.Instants)
	assert.Len(t, sum.Missed, 2, "instants 3 and 4 never started")
	assert.Equal(t, []string{"tick at 2026-11-30T20:00:01Z: [n1 n2]"}, sum.Duplicates)
	assert.Contains(t, out.String(), "DUPLICATE: job tick instant")

	var summary bytes.Buffer
	sum.write(&summary, []string{"n1", "n2"})
	assert.Contains(t, summary.String(), "duplicates: 1 scheduled instants ran more than once")
}

func TestDemoTimelineFailoverNeedsAnotherNode(t *testing.T) {
	s, _ := newDemoScript()
	s.lead(0, "n1", 1)
	s.tl.killed(s.at(1000), "n1")
	// A line from before the kill, read late, is no failover...
	s.lead(900, "n2", 2)
	// ...and neither is the killed node itself leading again.
	s.lead(1500, "n1", 3)
	assert.Empty(t, s.tl.summary(s.at(2000)).Failovers)
	s.lead(1700, "n3", 4)
	sum := s.tl.summary(s.at(2000))
	require.Len(t, sum.Failovers, 1)
	assert.Equal(t, "n3", sum.Failovers[0].By)
	assert.Equal(t, 700*time.Millisecond, sum.Failovers[0].Took)
}

func TestDemoTimelineRestartedNodeThatLeads(t *testing.T) {
	s, out := newDemoScript()
	s.tl.started(s.at(0), "n1", 1, "127.0.0.1:1", true)
	s.lead(100, "n1", 5)
	assert.Zero(t, s.tl.summary(s.at(200)).RejoinedFollower)
	assert.Contains(t, out.String(), "took over instead of following")
}

func TestDemoTimelineQuietWhileStopping(t *testing.T) {
	s, out := newDemoScript()
	s.lead(0, "n1", 1)
	s.follow(0, "n2", "n1")
	s.tl.stopping(s.at(100), []string{"n2"}, "followers")
	s.follow(110, "n2", "")
	s.tl.exited(s.at(120), "n2", nil, true)
	s.tl.exited(s.at(130), "n3", errors.New("exit status 1"), false)
	assert.NotContains(t, out.String(), "lost leader", "a node that is stopping losing its leader is not news")
	assert.Contains(t, out.String(), "stopping followers n2 with SIGTERM")
	assert.Contains(t, out.String(), "n3   exited on its own (exit status 1)")
	assert.Equal(t, []string{"n3"}, s.tl.summary(s.at(200)).Unexpected)
}

// Issue 25 item 6: the demo says, per missed instant, which failover it
// fell into and the rule that skipped it, from the nodes' own log lines,
// and its verdict is true to what it counted: "no instant ran twice; N fell
// into failovers and were overtaken", not a bare "N missed".
func TestDemoSummaryExplainsEachMissedInstant(t *testing.T) {
	s, out := newDemoScript()
	s.lead(0, "n1", 1)
	s.run(1000, "n1", "r1", 1)
	s.run(2000, "n1", "r2", 2)
	s.tl.killed(s.at(2500), "n1")
	s.lead(3700, "n2", 2)
	// The new leader gathers; 4 starts in the window, so 3 is overtaken.
	s.run(4000, "n2", "r4", 4)
	skip := func(ms int, line string) {
		ev := parseDemoLine([]byte(line), s.at(ms))
		ev.node = "n2"
		s.tl.apply(ev)
	}
	skip(4700, `{"time":"2026-11-30T20:00:04.7Z","level":"WARN","msg":"jobs: instants missed during failover; overtaken by a later instant already started","job":"tick","scheduled_at":"2026-11-30T20:00:03Z","count":1,"started":"2026-11-30T20:00:04Z"}`)
	s.run(5000, "n2", "r5", 5)

	sum := s.tl.summary(s.at(6000))
	require.Len(t, sum.Missed, 1)
	m := sum.Missed[0]
	assert.True(t, s.t0.Add(3*time.Second).Equal(m.At), "%v", m.At)
	require.NotNil(t, m.Failover)
	assert.Equal(t, "n1", m.Failover.Killed)
	assert.Equal(t, "n2", m.Node)
	assert.Contains(t, m.Rule, "overtaken by a later instant")
	assert.Contains(t, out.String(), "job tick: instant")

	var text bytes.Buffer
	sum.write(&text, []string{"n1", "n2"})
	assert.Contains(t, text.String(), "in failover n1→n2 (n1 killed at 2.50s, n2 led 1.2s later); skipped by n2: overtaken by a later instant")
	assert.Contains(t, text.String(), "verdict: no instant ran twice; 1 fell into failovers and were overtaken by a later instant, as misfire documents")
	assert.NotContains(t, text.String(), "1 missed)")

	// An instant nobody logged skipping is called what it is.
	s.run(8000, "n2", "r8", 8) // 6 and 7: n2 logged nothing about them
	sum = s.tl.summary(s.at(9000))
	text.Reset()
	sum.write(&text, []string{"n1", "n2"})
	assert.Contains(t, text.String(), "no node logged why")
	assert.Contains(t, text.String(), "verdict: 2 missed instants with no logged reason: a bug")
}

// The demo's skip rules name lines the job runner really logs, and every
// line the runner logs when it leaves an instant unrun is a skip rule: a
// reworded or a new line would otherwise leave its instants unexplained, and
// the demo would call them a bug.
func TestDemoSkipRulesAreTheRunnersLines(t *testing.T) {
	var src strings.Builder
	files, err := filepath.Glob("../jobs/*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(b)
	}
	logged := func(msg string) bool {
		if strings.Contains(src.String(), strconv.Quote(msg)) {
			return true
		}
		// A line the runner composes: "jobs: not starting: "+why.
		why, ok := strings.CutPrefix(msg, notStartingPrefix)
		return ok && strings.Contains(src.String(), strconv.Quote(notStartingPrefix)) &&
			strings.Contains(src.String(), strconv.Quote(why))
	}
	for msg := range demoSkipRules {
		assert.True(t, logged(msg), "the runner logs %q", msg)
	}
	assert.Contains(t, src.String(), strconv.Quote(misfireRunMsg))

	unrun := regexp.MustCompile(`"jobs: [^"]*(not run|not start|skipped|too late|overtaken|missed)[^"]*"`)
	for _, lit := range unrun.FindAllString(src.String(), -1) {
		msg, err := strconv.Unquote(lit)
		require.NoError(t, err)
		_, rule := demoSkipRules[msg]
		_, other := demoLinesNotMissed[msg]
		assert.True(t, rule || other || msg == misfireRunMsg,
			"the runner logs %q: a skip rule of the demo (demoSkipRules), or a line that leaves no scheduled instant unrun (demoLinesNotMissed)", msg)
	}
}

// notStartingPrefix is how the runner starts a line it composes from the
// reason a decided run may not start (Runner.mayStart).
const notStartingPrefix = "jobs: not starting: "

// demoLinesNotMissed are the runner's lines that sound like a skip but
// leave no scheduled instant unrun, with why.
var demoLinesNotMissed = map[string]string{
	notStartingPrefix: "composed with Runner.mayStart's reasons, each a skip rule",
	"jobs: not starting yet: this node cannot currently act as leader; trying again until it can":          "not a skip: the start is retried",
	"jobs: not started in the leadership it was decided in, which ended; this leadership decides it again": "not a skip: this leadership decides the instant again",
	"jobs: not started: ": "composed with the guard's reason and \"; the next leadership decides this instant\": handed over, the next leader decides the instant (jobs/refused.go)",
	"jobs: not running it again: its run ended after all (outcome heard)":                              "a rerun: the instant ran",
	"jobs: not running it again: this instant is still going on another node":                          "a rerun: the instant runs elsewhere",
	"jobs: previous leader's manual run was interrupted; not running it again (manual runs never are)": "a manual run, not a scheduled instant",
}
