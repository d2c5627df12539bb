package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/jobs"
)

// decodeJobs decodes the jobs view into its type, jobs.JobStatus (what
// Config.Jobs serves: the runner's Snapshot). ok is false for a view of
// another type (an embedding program's own), which gets the generic table.
func decodeJobs(raw json.RawMessage) ([]jobs.JobStatus, bool) {
	var js []jobs.JobStatus
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if len(raw) == 0 || dec.Decode(&js) != nil || len(js) == 0 {
		return nil, false
	}
	return js, true
}

// writeJobTable prints one line per job: when it runs next and how its
// latest known run went. now (the server's clock) gives "in 5h3m".
func writeJobTable(w io.Writer, rows []jobs.JobStatus, now time.Time) error {
	withErr := false
	for _, r := range rows {
		withErr = withErr || (r.LastRun != nil && r.LastRun.Error != "")
	}
	fmt.Fprintf(w, "\nJOBS\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "NAME\tSCHEDULE\tNEXT RUN\tLAST INSTANT\tOUTCOME\tEXIT\tDURATION\tTERM\tSKIPPED"
	if withErr {
		head += "\tERROR"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		last, outcome, exit, dur, term, errText := "-", "-", "-", "-", "-", ""
		if lr := r.LastRun; lr != nil {
			last, outcome, term = timeCell(lr.ScheduledAt), orDash(lr.Outcome.String()), fmt.Sprint(lr.Term)
			exit = fmt.Sprint(lr.ExitCode)
			dur = secondsCell(lr.Duration.Seconds())
			if lr.Attempt > 1 {
				outcome += fmt.Sprintf(" (%d attempts)", lr.Attempt)
			}
			errText = oneLine(lr.Error)
		}
		// A newer ledger entry is a run this node did not do (the leader's,
		// seen from a follower): show it, without local details.
		// Outcome "none" marks when a leader took the job up, not a run.
		if l := r.Ledger; l != nil && l.Outcome != jobs.OutcomeNone && (r.LastRun == nil || l.Instant.After(r.LastRun.ScheduledAt)) {
			last, outcome, term = timeCell(l.Instant), orDash(l.Outcome.String()), fmt.Sprint(l.Term)
			exit, dur, errText = "-", "-", ""
		}
		if r.Running > 0 {
			outcome = fmt.Sprintf("running (%d)", r.Running)
		}
		line := strings.Join([]string{
			oneLine(r.Name), oneLine(r.Schedule), nextCell(r.NextRun, now),
			last, outcome, exit, dur, term, skippedCell(r.Skipped),
		}, "\t")
		if withErr {
			line += "\t" + orDash(errText)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

func timeCell(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func nextCell(t, now time.Time) string {
	s := timeCell(t)
	if s != "-" && !now.IsZero() && t.After(now) {
		s += " (in " + humanDuration(t.Sub(now)) + ")"
	}
	return s
}

func secondsCell(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	switch {
	case d >= time.Second:
		return d.Round(time.Second).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}

func skippedCell(c jobs.Counters) string {
	var parts []string
	for k, v := range map[string]uint64{"overlap": c.Overlap, "refused": c.Refused,
		"misfired": c.Misfired, "already_started": c.AlreadyStarted} {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, v))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// humanDuration is d rounded to the second, with days for waits of a day
// or more ("6d11h55m" rather than "155h54m57s").
func humanDuration(d time.Duration) string {
	if d < 24*time.Hour {
		return d.Round(time.Second).String()
	}
	d = d.Round(time.Minute)
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	return fmt.Sprintf("%dd%dh%dm", days, d/time.Hour, (d%time.Hour)/time.Minute)
}
