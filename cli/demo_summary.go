package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// write prints the summary for people: failovers and their times, restarts,
// runs per node, and the verdict on duplicate instants.
func (s demoSummary) write(w io.Writer, nodes []string) {
	fmt.Fprintf(w, "\nsummary after %.1fs with %d nodes:\n", s.Elapsed.Seconds(), len(nodes))

	switch {
	case len(s.Failovers) == 0:
		fmt.Fprintf(w, "  failovers:  none (%d leaders killed; run longer or with a shorter --kill-every)\n", s.Kills)
	default:
		times := make([]string, len(s.Failovers))
		var total, worst time.Duration
		for i, f := range s.Failovers {
			times[i] = fmt.Sprintf("%s→%s %s", f.Killed, f.By, f.Took.Round(time.Millisecond))
			total += f.Took
			worst = max(worst, f.Took)
		}
		fmt.Fprintf(w, "  failovers:  %d of %d leaders killed: %s\n", len(s.Failovers), s.Kills, strings.Join(times, ", "))
		fmt.Fprintf(w, "              mean %s, worst %s (SIGKILL of the leader → another node's \"became leader\")\n",
			(total / time.Duration(len(s.Failovers))).Round(time.Millisecond), worst.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "  restarts:   %d killed nodes restarted, %d rejoined as followers\n", s.Restarts, s.RejoinedFollower)

	counts := make([]string, 0, len(nodes))
	total := 0
	for _, n := range nodes {
		counts = append(counts, fmt.Sprintf("%s %d", n, s.RunsPerNode[n]))
		total += s.RunsPerNode[n]
	}
	fmt.Fprintf(w, "  job runs:   %s (%d in all, %d distinct scheduled instants)\n",
		strings.Join(counts, ", "), total, s.Instants)
	s.writeMissed(w)
	if len(s.Unexpected) > 0 {
		fmt.Fprintf(w, "  crashed:    %s exited without being told to\n", strings.Join(slices.Compact(slices.Sorted(slices.Values(s.Unexpected))), ", "))
	}
	if len(s.Duplicates) == 0 {
		fmt.Fprintln(w, "  duplicates: none: no scheduled instant ran twice")
	} else {
		fmt.Fprintf(w, "  duplicates: %d scheduled instants ran more than once:\n", len(s.Duplicates))
		for _, d := range s.Duplicates {
			fmt.Fprintf(w, "    %s\n", d)
		}
	}
	fmt.Fprintf(w, "\n%s\n", s.verdict())
}

// writeMissed lists each missed instant: the failover it fell into and the
// rule that skipped it, as the node that skipped it logged.
func (s demoSummary) writeMissed(w io.Writer) {
	if len(s.Missed) == 0 {
		fmt.Fprintln(w, "  missed:     none: every instant from the first run to the last ran")
		return
	}
	fmt.Fprintf(w, "  missed:     %d instants no node ran:\n", len(s.Missed))
	for _, m := range s.Missed {
		where := "outside any failover"
		if f := m.Failover; f != nil {
			where = fmt.Sprintf("in failover %s→%s (%s killed at %.2fs, %s led %s later)",
				f.Killed, f.By, f.Killed, f.KilledAt.Sub(s.Start).Seconds(), f.By, f.Took.Round(time.Millisecond))
		}
		why := "no node logged why: every instant is started or skipped with a logged reason, so this is a bug"
		if m.Rule != "" {
			why = "skipped by " + m.Node + ": " + m.Rule
		}
		fmt.Fprintf(w, "    %s %s %s; %s\n", m.Job, m.At.Local().Format(time.TimeOnly), where, why)
	}
}

// verdict is the demo's one-line conclusion, true to what it counted.
func (s demoSummary) verdict() string {
	var problems []string
	if n := len(s.Duplicates); n > 0 {
		problems = append(problems, fmt.Sprintf("%d instants ran twice", n))
	}
	unexplained, outside, overtaken := 0, 0, 0
	for _, m := range s.Missed {
		switch {
		case m.Rule == "":
			unexplained++
		case m.Failover == nil:
			outside++
		}
		if strings.HasPrefix(m.Rule, "overtaken") {
			overtaken++
		}
	}
	if unexplained > 0 {
		problems = append(problems, fmt.Sprintf("%d missed instants with no logged reason", unexplained))
	}
	if len(problems) > 0 {
		return "verdict: " + strings.Join(problems, "; ") + ": a bug, please report it with the nodes' logs"
	}
	v := "verdict: no instant ran twice"
	switch n := len(s.Missed); {
	case n == 0:
		return v + "; none was missed"
	case overtaken == n && outside == 0:
		return fmt.Sprintf("%s; %d fell into failovers and were overtaken by a later instant, as misfire documents (docs/jobs.md, \"Missed instants\")", v, n)
	case outside == 0:
		return fmt.Sprintf("%s; %d fell into failovers and were skipped, each by the rule named above (docs/jobs.md)", v, n)
	default:
		return fmt.Sprintf("%s; %d were skipped, each by the rule named above (docs/jobs.md), %d of them outside a failover", v, n, outside)
	}
}
