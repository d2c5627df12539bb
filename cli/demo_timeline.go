package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// demoTimeline turns the nodes' events into the demo's live timeline and
// keeps the tallies of its summary. It is plain state driven by one
// goroutine (the demo loop), so tests feed it events directly.
type demoTimeline struct {
	out   io.Writer
	start time.Time

	// leader is the node whose "became leader" was seen last and which has
	// neither stopped leading nor been killed since; "" when none.
	leader string
	// follows is each node's last known leader, for "lost leader n2".
	follows map[string]string
	// kill is the pending failover: the leader killed, and when.
	kill *demoKill
	// leaving holds nodes the demo is stopping: their losing sight of the
	// leader as they go is not news.
	leaving map[string]bool
	// rejoining holds restarted nodes whose first leadership event is
	// still to come.
	rejoining map[string]bool
	runs      map[string]demoRun // by run id
	// instants maps job and scheduled instant to the nodes that started
	// it, in order; more than one is the bug the demo exists to rule out.
	instants map[demoInstant][]string
	// skips maps an instant to the rule that skipped it, as a node logged.
	skips map[demoInstant]demoSkip

	sum demoSummary
}

// demoKill is a SIGKILLed leader whose successor has not been seen yet.
type demoKill struct {
	node string
	at   time.Time
}

// demoRun is a started run, kept to label its output lines.
type demoRun struct {
	node      string
	scheduled time.Time
	term      uint64
}

// demoInstant is one scheduled instant of one job.
type demoInstant struct {
	job string
	at  int64 // Unix nanoseconds
}

// demoSkip is an instant a node skipped, and the rule it skipped it by.
type demoSkip struct {
	node, rule string
}

// demoFailover is one measured failover.
type demoFailover struct {
	Killed, By string
	Term       uint64
	// KilledAt is just before the SIGKILL; Took is from then to the
	// successor's "became leader" log line.
	KilledAt time.Time
	Took     time.Duration
}

// demoMissed is a scheduled instant no node started: the failover it fell
// into (if any) and the rule a node logged skipping it by ("" if none did,
// which would be a bug: every instant is started or skipped with a logged
// reason).
type demoMissed struct {
	Job      string
	At       time.Time
	Failover *demoFailover
	Node     string
	Rule     string
}

// demoSummary is what the demo found, printed at the end and asserted by
// its test.
type demoSummary struct {
	// Start is when the demo started; Elapsed how long it ran.
	Start     time.Time
	Elapsed   time.Duration
	Failovers []demoFailover
	// Kills counts leaders killed; a kill with no successor before the end
	// is a kill without a failover.
	Kills int
	// Restarts counts killed nodes started again; RejoinedFollower those
	// whose first leadership event after the restart was following
	// another node (what should happen: there is no preemption).
	Restarts, RejoinedFollower int
	// RunsPerNode counts started job runs.
	RunsPerNode map[string]int
	// Instants is the number of distinct scheduled instants started.
	Instants int
	// Missed lists the instants between the first and the last started
	// one that no node started (the demo's job is due every demoJobEvery),
	// each with its failover and the rule that skipped it.
	Missed []demoMissed
	// Duplicates lists instants started more than once, as "job at
	// instant: n1, n2".
	Duplicates []string
	// Problems counts warnings and errors the nodes logged.
	Problems int
	// Unexpected lists nodes that exited without being told to.
	Unexpected []string
}

func newDemoTimeline(out io.Writer, start time.Time) *demoTimeline {
	return &demoTimeline{
		out:       out,
		start:     start,
		follows:   make(map[string]string),
		rejoining: make(map[string]bool),
		leaving:   make(map[string]bool),
		runs:      make(map[string]demoRun),
		instants:  make(map[demoInstant][]string),
		skips:     make(map[demoInstant]demoSkip),
		sum:       demoSummary{RunsPerNode: make(map[string]int)},
	}
}

// printf writes one timeline line: seconds since the start, node, text.
func (tl *demoTimeline) printf(at time.Time, node, format string, args ...any) {
	fmt.Fprintf(tl.out, "%7.2fs  %-3s  %s\n", at.Sub(tl.start).Seconds(), node, fmt.Sprintf(format, args...))
}

// started notes that the demo started (or restarted) node.
func (tl *demoTimeline) started(at time.Time, node string, pid int, addr string, restart bool) {
	if restart {
		tl.sum.Restarts++
		tl.rejoining[node] = true
		tl.printf(at, node, "restarted (pid %d, udp %s); it must rejoin as a follower", pid, addr)
		return
	}
	tl.printf(at, node, "started (pid %d, udp %s)", pid, addr)
}

// killed notes that the demo SIGKILLed node, the leader, at at.
func (tl *demoTimeline) killed(at time.Time, node string) {
	tl.sum.Kills++
	tl.kill = &demoKill{node: node, at: at}
	if tl.leader == node {
		tl.leader = ""
	}
	tl.printf(at, node, "killed %s (leader) with SIGKILL", node)
}

// noLeaderToKill notes a kill tick that found no leader.
func (tl *demoTimeline) noLeaderToKill(at time.Time) {
	tl.printf(at, "-", "no leader right now; nothing to kill this time")
}

// stopping notes that the demo sent SIGTERM to nodes.
func (tl *demoTimeline) stopping(at time.Time, nodes []string, what string) {
	for _, n := range nodes {
		tl.leaving[n] = true
	}
	tl.printf(at, "-", "stopping %s %s with SIGTERM", what, strings.Join(nodes, ", "))
}

// apply updates the state with ev and prints what it means.
func (tl *demoTimeline) apply(ev demoEvent) {
	switch ev.kind {
	case evBecameLeader:
		tl.becameLeader(ev)
	case evStoppedLeading:
		if tl.leader == ev.node {
			tl.leader = ""
		}
		tl.printf(ev.at, ev.node, "stopped leading")
	case evLeaderChanged:
		tl.leaderChanged(ev)
	case evRunStarted:
		tl.runStarted(ev)
	case evOutput:
		r, ok := tl.runs[ev.runID]
		if !ok {
			tl.printf(ev.at, ev.node, "job %s: %s", ev.job, ev.text)
			return
		}
		tl.printf(ev.at, ev.node, "job %s for %s: %q", ev.job, r.scheduled.Local().Format(time.TimeOnly), ev.text)
	case evMisfireRun:
		tl.printf(ev.at, ev.node, "job %s: instant %s fell into the failover gap; running it once now",
			ev.job, ev.scheduled.Local().Format(time.TimeOnly))
	case evSkipped:
		tl.skipped(ev)
	case evProblem:
		tl.sum.Problems++
		tl.printf(ev.at, ev.node, "logged: %s", ev.text)
	case evExited:
		// The demo loop reports exits itself: only it knows whether the
		// exit was asked for.
	}
}

func (tl *demoTimeline) becameLeader(ev demoEvent) {
	tl.leader = ev.node
	tl.follows[ev.node] = ev.node
	note := ""
	if k := tl.kill; k != nil && k.node != ev.node && !ev.at.Before(k.at) {
		took := ev.at.Sub(k.at)
		tl.sum.Failovers = append(tl.sum.Failovers, demoFailover{Killed: k.node, By: ev.node, Term: ev.term, KilledAt: k.at, Took: took})
		tl.kill = nil
		note = fmt.Sprintf(" — failover %s after %s was killed", took.Round(time.Millisecond), k.node)
	}
	if tl.rejoining[ev.node] {
		delete(tl.rejoining, ev.node)
		note += " (restarted node took over instead of following)"
	}
	tl.printf(ev.at, ev.node, "became leader (term %d)%s", ev.term, note)
}

func (tl *demoTimeline) leaderChanged(ev demoEvent) {
	prev := tl.follows[ev.node]
	tl.follows[ev.node] = ev.leader
	switch {
	case ev.leader == ev.node:
		// Printed as "became leader".
	case ev.leader == "":
		if prev != "" && prev != ev.node && !tl.leaving[ev.node] {
			tl.printf(ev.at, ev.node, "lost leader %s", prev)
		}
	case tl.rejoining[ev.node]:
		delete(tl.rejoining, ev.node)
		tl.sum.RejoinedFollower++
		tl.printf(ev.at, ev.node, "rejoined as a follower of %s (term %d)", ev.leader, ev.term)
	default:
		tl.printf(ev.at, ev.node, "follows %s (term %d)", ev.leader, ev.term)
	}
}

func (tl *demoTimeline) runStarted(ev demoEvent) {
	tl.runs[ev.runID] = demoRun{node: ev.node, scheduled: ev.scheduled, term: ev.term}
	tl.sum.RunsPerNode[ev.node]++
	key := demoInstant{job: ev.job, at: ev.scheduled.UnixNano()}
	prev := tl.instants[key]
	tl.instants[key] = append(prev, ev.node)
	if len(prev) > 0 {
		tl.printf(ev.at, ev.node, "DUPLICATE: job %s instant %s already started on %v",
			ev.job, ev.scheduled.Local().Format(time.TimeOnly), prev)
	}
}

// skipped notes the instants ev says a node skipped, and the rule.
func (tl *demoTimeline) skipped(ev demoEvent) {
	n := 0
	for t := ev.first; !t.After(ev.scheduled) && n < 1000; t = t.Add(demoJobEvery) {
		tl.skips[demoInstant{job: ev.job, at: t.UnixNano()}] = demoSkip{node: ev.node, rule: ev.text}
		n++
	}
	which := "instant " + ev.first.Local().Format(time.TimeOnly)
	if n > 1 {
		which = fmt.Sprintf("%d instants %s–%s", n, ev.first.Local().Format(time.TimeOnly), ev.scheduled.Local().Format(time.TimeOnly))
	}
	tl.printf(ev.at, ev.node, "job %s: %s skipped: %s", ev.job, which, ev.text)
}

// exited notes that node's process ended; expected says the demo asked for
// it (a kill or the final stop).
func (tl *demoTimeline) exited(at time.Time, node string, err error, expected bool) {
	status := "exit 0"
	if err != nil {
		status = err.Error()
	}
	if !expected {
		tl.sum.Unexpected = append(tl.sum.Unexpected, node)
		tl.printf(at, node, "exited on its own (%s)", status)
		return
	}
	if tl.leader == node {
		tl.leader = ""
	}
	tl.printf(at, node, "exited (%s)", status)
}

// summary finishes the tallies.
func (tl *demoTimeline) summary(end time.Time) demoSummary {
	s := tl.sum
	s.Start, s.Elapsed = tl.start, end.Sub(tl.start)
	s.Instants = len(tl.instants)
	s.Duplicates = nil
	first, last := map[string]int64{}, map[string]int64{}
	perJob := map[string]int{}
	keys := make([]demoInstant, 0, len(tl.instants))
	for k, nodes := range tl.instants {
		if f, ok := first[k.job]; !ok || k.at < f {
			first[k.job] = k.at
		}
		last[k.job] = max(last[k.job], k.at)
		perJob[k.job]++
		if len(nodes) > 1 {
			keys = append(keys, k)
		}
	}
	s.Missed = nil
	for job := range perJob {
		for at := first[job]; at <= last[job]; at += int64(demoJobEvery) {
			k := demoInstant{job: job, at: at}
			if _, ran := tl.instants[k]; ran {
				continue
			}
			m := demoMissed{Job: job, At: time.Unix(0, at), Failover: s.failoverAround(time.Unix(0, at))}
			if sk, ok := tl.skips[k]; ok {
				m.Node, m.Rule = sk.node, sk.rule
			}
			s.Missed = append(s.Missed, m)
		}
	}
	slices.SortFunc(s.Missed, func(a, b demoMissed) int { return a.At.Compare(b.At) })
	slices.SortFunc(keys, func(a, b demoInstant) int { return cmp.Compare(a.at, b.at) })
	for _, k := range keys {
		s.Duplicates = append(s.Duplicates, fmt.Sprintf("%s at %s: %v",
			k.job, time.Unix(0, k.at).UTC().Format(time.RFC3339), tl.instants[k]))
	}
	return s
}

// failoverAround returns the failover an instant at at fell into: from an
// instant before its leader was killed (due, not started yet) to one
// after its successor led (taken up, not started yet); nil if none.
func (s demoSummary) failoverAround(at time.Time) *demoFailover {
	for i := range s.Failovers {
		f := &s.Failovers[i]
		if !at.Before(f.KilledAt.Add(-demoJobEvery)) && !at.After(f.KilledAt.Add(f.Took+demoJobEvery)) {
			return f
		}
	}
	return nil
}
