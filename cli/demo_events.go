package cli

import (
	"encoding/json"
	"strings"
	"time"
)

// demoEventKind is what a demo node's log line (or its exit) means for the
// timeline. The demo learns everything from the nodes' own JSON logs, as an
// operator's log shipper would: it has no back door into their state.
type demoEventKind int

const (
	evIgnored        demoEventKind = iota // routine lines the timeline skips
	evBecameLeader                        // "became leader"
	evStoppedLeading                      // "stopped leading"
	evLeaderChanged                       // "leader changed"
	evRunStarted                          // "jobs: run started"
	evOutput                              // "jobs: output"
	evMisfireRun                          // a missed instant is run once by the new leader
	evSkipped                             // instants a node skipped, with the rule that skipped them
	evProblem                             // a warning, an error, or a line that is not JSON
	evExited                              // the process ended (sent by the reader, not parsed)
)

// demoEvent is one parsed line of a demo node's log.
type demoEvent struct {
	kind demoEventKind
	// node is the demo's name for the process that wrote the line, and gen
	// which start of it (0 first, then one more per restart).
	node string
	gen  int
	// at is the line's own timestamp (the node's clock, the same machine's
	// wall clock as the demo's), or when the demo read it if it has none.
	at        time.Time
	term      uint64
	leader    string    // evLeaderChanged: "" when the node lost its leader
	job       string    // evRunStarted, evOutput, evMisfireRun
	runID     string    // evRunStarted, evOutput
	scheduled time.Time // evRunStarted, evMisfireRun; evSkipped: the last instant skipped
	first     time.Time // evSkipped: the first instant skipped
	text      string    // evOutput: the job's line; evProblem: the message; evSkipped: the rule
	exitErr   error     // evExited: the Wait error, nil for exit 0
}

// demoLogLine holds the fields of lanleader's JSON log lines the demo reads.
type demoLogLine struct {
	Time        time.Time `json:"time"`
	Level       string    `json:"level"`
	Msg         string    `json:"msg"`
	Term        uint64    `json:"term"`
	Leader      string    `json:"leader"`
	Job         string    `json:"job"`
	RunID       string    `json:"run_id"`
	ScheduledAt time.Time `json:"scheduled_at"`
	Line        string    `json:"line"`
	Err         string    `json:"err"`
	From        time.Time `json:"from"`
	Count       int       `json:"count"`
}

// misfireRunMsg is how the job runner logs a missed instant that it runs
// once (misfire: run-once); the demo shows it because it is the failover
// gap being filled.
const misfireRunMsg = "jobs: instant missed during failover; running it once now (misfire: run-once)"

// demoSkipRules are the job runner's lines that skip instants, with the
// rule in a newcomer's words: the demo names, per missed instant, the rule
// that skipped it. Each line names its instants by scheduled_at (one, or
// the last of count when back is set), or by from and count.
var demoSkipRules = map[string]struct {
	rule string
	back bool
}{
	"jobs: instants overtaken by a later one; skipped": {
		rule: "overtaken by a later instant: misfire run-once runs only the latest of the instants missed in a row"},
	"jobs: instants missed during failover; overtaken by a later instant already started": {
		rule: "overtaken by a later instant the new leader had already started while it gathered its peers' ledgers", back: true},
	"jobs: instant missed during failover; too late to run (misfire_grace)":                    {rule: "too late to run (misfire_grace)"},
	"jobs: instant too late to run (misfire_grace)":                                            {rule: "too late to run (misfire_grace)"},
	"jobs: instant missed during failover; skipped (misfire: skip)":                            {rule: "skipped (misfire: skip)"},
	"jobs: not started: this node could not act as leader before a later instant came due":     {rule: "the leader could not act before the next instant came due"},
	"jobs: not started: this node could not act as leader within misfire_grace":                {rule: "the leader could not act within misfire_grace"},
	"jobs: not starting: previous run still going (overlap: skip)":                             {rule: "the previous run was still going (overlap: skip)"},
	"jobs: not starting: previous run still going on another node (overlap: skip)":             {rule: "the previous run was still going on another node (overlap: skip)"},
	"jobs: not starting: previous leader's run may still be going on its node (overlap: skip)": {rule: "the previous leader's run could still be going (overlap: skip)"},
	"jobs: not starting: this or a later instant already started":                              {rule: "this or a later instant had already started"},
	"jobs: previous leader's run was interrupted; not running it again": {
		rule: "the killed leader had started it as it died (its ledger said so): not run again, at most once (rerun_interrupted: false)"},
	"jobs: not starting: lanleader is stopping": {rule: "its node was stopping"},
	"jobs: instant missed during failover; overtaken by a later instant not started yet": {
		rule: "overtaken by a later instant already due: misfire run-once runs only the latest"},
	"jobs: instants missed during failover; not run: a truncated ledger left this job out, so what the last leader ran is unknown": {
		rule: "the last leader's ledger was truncated and left this job out: not run, since it may have run"},
	"jobs: not starting: could not record the run in the cluster first": {
		rule: "the leader could not record the run with a majority before starting it (quorum)"},
	"jobs: not starting: this node cannot currently act as leader": {
		rule: "the leader could no longer act as leader when the run was to start"},
	"jobs: not starting: the leadership it was decided in ended (or the job was removed)": {
		rule: "the leadership that decided it ended before the run started"},
	"jobs: rerun not started: a later instant came due first": {
		rule: "the killed leader had started it as it died; its rerun was overtaken by a later instant"},
	"jobs: job removed by reload before its due instant started; not run": {rule: "its job was removed by a reload"},
	"jobs: instant missed during failover; not run: coalesced into the interrupted run's rerun": {
		rule: "coalesced into the rerun of the killed leader's interrupted run (rerun_interrupted)"},
	"jobs: previous leader's run was interrupted; not running it again: a later instant already started": {
		rule: "the killed leader had started it as it died; not run again: a later instant had already started"},
}

// parseDemoLine turns one line of a node's stderr into an event. now is used
// when the line carries no timestamp (it is not lanleader's JSON: a usage
// error, a panic).
func parseDemoLine(line []byte, now time.Time) demoEvent {
	var l demoLogLine
	if err := json.Unmarshal(line, &l); err != nil || l.Msg == "" {
		text := strings.TrimSpace(string(line))
		if text == "" {
			return demoEvent{kind: evIgnored, at: now}
		}
		return demoEvent{kind: evProblem, at: now, text: text}
	}
	ev := demoEvent{at: l.Time, term: l.Term}
	if ev.at.IsZero() {
		ev.at = now
	}
	switch l.Msg {
	case "became leader":
		ev.kind = evBecameLeader
	case "stopped leading":
		ev.kind = evStoppedLeading
	case "leader changed":
		ev.kind, ev.leader = evLeaderChanged, l.Leader
		if l.Leader == noLeaderKnown {
			ev.leader = ""
		}
	case "jobs: run started":
		ev.kind, ev.job, ev.runID, ev.scheduled = evRunStarted, l.Job, l.RunID, l.ScheduledAt
	case "jobs: output":
		ev.kind, ev.job, ev.runID, ev.text = evOutput, l.Job, l.RunID, l.Line
	case misfireRunMsg:
		ev.kind, ev.job, ev.scheduled = evMisfireRun, l.Job, l.ScheduledAt
	default:
		if r, ok := demoSkipRules[l.Msg]; ok {
			ev.kind, ev.job, ev.text = evSkipped, l.Job, r.rule
			n := time.Duration(max(l.Count, 1) - 1)
			switch {
			case !l.From.IsZero():
				ev.first, ev.scheduled = l.From, l.From.Add(n*demoJobEvery)
			case r.back:
				ev.first, ev.scheduled = l.ScheduledAt.Add(-n*demoJobEvery), l.ScheduledAt
			default:
				ev.first, ev.scheduled = l.ScheduledAt, l.ScheduledAt
			}
			return ev
		}
		if l.Level == "WARN" || l.Level == "ERROR" {
			ev.kind, ev.text = evProblem, l.Msg
			if l.Err != "" {
				ev.text += ": " + l.Err
			}
		}
	}
	return ev
}
