package httpapi

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/jobs"
)

// tableTime is how `lanleader jobs` prints instants: the reader's local
// zone, to the second.
const tableTime = "2006-01-02 15:04:05"

// WriteJobs prints doc for a person: per job its schedule and next
// instants, then one line per recent run, newest first.
func WriteJobs(w io.Writer, doc JobsDoc) error {
	if err := writeJobRuns(w, doc); err != nil {
		return err
	}
	return writeServices(w, doc.Services, doc.Time)
}

// writeJobRuns prints each job with its next instants and recent runs.
func writeJobRuns(w io.Writer, doc JobsDoc) error {
	if len(doc.Jobs) == 0 {
		_, err := fmt.Fprintf(w, "node %s has no jobs\n", orDash(doc.Node))
		return err
	}
	for i, j := range doc.Jobs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		next := make([]string, len(j.Next))
		for k, t := range j.Next {
			next[k] = t.Local().Format(tableTime)
		}
		fmt.Fprintf(w, "JOB %s  schedule %q  overlap %s", j.Name, j.Schedule, j.Overlap)
		if j.Running > 0 {
			fmt.Fprintf(w, "  running %d", j.Running)
		}
		fmt.Fprintf(w, "\n  next: %s\n", orDash(strings.Join(next, ", ")))
		if len(j.Runs) == 0 {
			fmt.Fprintln(w, "  no runs yet")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  RUN ID\tKIND\tINSTANT\tNODE\tTERM\tSTARTED\tDURATION\tOUTCOME\tEXIT\tATTEMPTS")
		for _, r := range j.Runs {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n",
				orDash(r.RunID), runKind(r), r.ScheduledAt.Local().Format(tableTime), orDash(r.Node), r.Term,
				runStarted(r), runDuration(r), r.Outcome, runExit(r), runAttempts(r))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// runKind says what started a run; "heard" marks runs this node knows only
// from a leader's ledger.
func runKind(r jobs.RunRecord) string {
	k := "scheduled"
	if r.Manual {
		k = "manual"
	}
	if r.Heard {
		k += " (heard)"
	}
	return k
}

func runStarted(r jobs.RunRecord) string {
	if r.Heard || r.Started.IsZero() {
		return "-"
	}
	return r.Started.Local().Format(tableTime)
}

func runDuration(r jobs.RunRecord) string {
	if r.Heard {
		return "-"
	}
	return r.Duration.Round(time.Millisecond).String()
}

func runExit(r jobs.RunRecord) string {
	if r.Heard || r.ExitCode < 0 {
		return "-"
	}
	return strconv.Itoa(r.ExitCode)
}

func runAttempts(r jobs.RunRecord) string {
	if r.Heard || r.Attempt == 0 {
		return "-"
	}
	return strconv.Itoa(r.Attempt)
}
