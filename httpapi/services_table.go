package httpapi

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/jobs"
)

// writeServices prints the leader-only services as `lanleader status` and
// `lanleader jobs` show them: one line each, what this node does with it
// and the last copy the cluster recorded. Nothing without services.
func writeServices(w io.Writer, svcs []jobs.ServiceStatus, now time.Time) error {
	if len(svcs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nSERVICES")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tHERE\tSINCE\tPID\tTERM\tRESTARTS\tLAST EXIT\tLAST COPY")
	for _, s := range svcs {
		state := string(s.State)
		switch {
		case s.Waiting != "":
			state += " (" + s.Waiting + ")"
		case !s.Next.IsZero():
			state += " (at " + s.Next.Local().Format(tableTime) + ")"
		}
		since := "-"
		if !s.Since.IsZero() {
			since = s.Since.Local().Format(tableTime)
			if !now.IsZero() && !now.Before(s.Since) {
				since += " (" + now.Sub(s.Since).Round(time.Second).String() + ")"
			}
		}
		pid, term := "-", "-"
		if s.PID != 0 {
			pid = fmt.Sprint(s.PID)
		}
		if s.Term != 0 {
			term = fmt.Sprint(s.Term)
		}
		last := "-"
		if c := s.LastCopy; c != nil {
			last = "stopped"
			if c.Running {
				last = "running"
			}
			last += " on " + orDash(c.Node) + ", term " + fmt.Sprint(c.Term)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, state, since, pid, term, s.Restarts, orDash(s.LastExit), last)
	}
	return tw.Flush()
}
