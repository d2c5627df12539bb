package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// jobRow is the part of the job runner's per-job view (jobs.JobStatus as
// JSON) that the status table shows. It is decoded by field name, not by
// importing jobs: a view of another shape falls back to the generic table.
type jobRow struct {
	Name     string    `json:"name"`
	Schedule string    `json:"schedule"`
	NextRun  time.Time `json:"next_run"`
	Running  int       `json:"running"`
	LastRun  *struct {
		ScheduledAt     time.Time `json:"scheduled_at"`
		Outcome         string    `json:"outcome"`
		ExitCode        int       `json:"exit_code"`
		DurationSeconds float64   `json:"duration_seconds"`
		Attempt         int       `json:"attempt"`
		Term            uint64    `json:"term"`
		Error           string    `json:"error"`
	} `json:"last_run"`
	// Ledger is the newest entry known cluster-wide: on a follower the
	// only record of what the leader ran.
	Ledger *struct {
		Instant time.Time `json:"instant"`
		Outcome string    `json:"outcome"`
		Term    uint64    `json:"term"`
	} `json:"ledger"`
	Skipped map[string]uint64 `json:"skipped"`
}

// decodeJobRows returns the rows if raw is a list of objects that all have
// a name and a schedule (the job runner's view), else ok false.
func decodeJobRows(raw json.RawMessage) ([]jobRow, bool) {
	var probe []map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil || len(probe) == 0 {
		return nil, false
	}
	for _, p := range probe {
		if _, ok := p["name"]; !ok {
			return nil, false
		}
		if _, ok := p["schedule"]; !ok {
			return nil, false
		}
	}
	var rows []jobRow
	if json.Unmarshal(raw, &rows) != nil {
		return nil, false
	}
	return rows, true
}

// writeJobTable prints one line per job: when it runs next and how its
// latest known run went. now (the server's clock) gives "in 5h3m".
func writeJobTable(w io.Writer, rows []jobRow, now time.Time) error {
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
			last, outcome, term = timeCell(lr.ScheduledAt), orDash(lr.Outcome), fmt.Sprint(lr.Term)
			exit = fmt.Sprint(lr.ExitCode)
			dur = secondsCell(lr.DurationSeconds)
			if lr.Attempt > 1 {
				outcome += fmt.Sprintf(" (%d attempts)", lr.Attempt)
			}
			errText = oneLine(lr.Error)
		}
		// A newer ledger entry is a run this node did not do (the leader's,
		// seen from a follower): show it, without local details.
		// Outcome "none" marks when a leader took the job up, not a run.
		if l := r.Ledger; l != nil && l.Outcome != "none" && (r.LastRun == nil || l.Instant.After(r.LastRun.ScheduledAt)) {
			last, outcome, term = timeCell(l.Instant), orDash(l.Outcome), fmt.Sprint(l.Term)
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

func skippedCell(m map[string]uint64) string {
	var parts []string
	for k, v := range m {
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
