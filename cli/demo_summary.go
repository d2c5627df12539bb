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
	fmt.Fprintf(w, "  job runs:   %s (%d in all, %d distinct scheduled instants, %d missed)\n",
		strings.Join(counts, ", "), total, s.Instants, s.Missed)
	if len(s.Unexpected) > 0 {
		fmt.Fprintf(w, "  crashed:    %s exited without being told to\n", strings.Join(slices.Compact(slices.Sorted(slices.Values(s.Unexpected))), ", "))
	}
	if len(s.Duplicates) == 0 {
		fmt.Fprintln(w, "  duplicates: none: no scheduled instant ran twice")
		return
	}
	fmt.Fprintf(w, "  duplicates: %d scheduled instants ran more than once:\n", len(s.Duplicates))
	for _, d := range s.Duplicates {
		fmt.Fprintf(w, "    %s\n", d)
	}
}
