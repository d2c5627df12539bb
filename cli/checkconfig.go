package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/jobs"
)

// maxPreview bounds --count: a preview is read by a person.
const maxPreview = 1000

func newCheckConfigCmd(modes []Mode) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check-config [FILE]",
		Short: "validate a config file and print each job's next runs",
		Long: `Check-config validates the config file (FILE, or --config) exactly as run
does, with the same flags, without touching the network, and prints every
problem at once (file:line: key: reason), warnings (a bind address not up
here, a job dir missing, no key file), and each job's next run times
(--count, default 3) after now or after --from, one per line in RFC 3339
with the offset of the job's zone (CRON_TZ, or this machine's): preview a
daylight saving night with --from. The times are the runs' keys:
LANLEADER_SCHEDULED_AT is the same instant in UTC. It exits 3 if run would
refuse the file.`,
		Example: `  lanleader check-config /etc/lanleader/lanleader.yaml
  lanleader check-config --config app.yaml --mode=static --leader db1
  lanleader check-config app.yaml --from 2026-10-24T12:00:00+02:00 --count 5
  lanleader check-config --json app.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("want at most one config FILE, got %d", len(args))}
			}
			if len(args) == 1 && cmd.Flags().Changed("config") {
				return usageError{fmt.Errorf("give the config file as FILE or as --config, not both")}
			}
			return nil
		},
	}
	rf := addRunFlags(cmd, modes)
	from := cmd.Flags().String("from", "", "print the runs after this RFC 3339 time (e.g. 2026-03-28T12:00:00+01:00) instead of now")
	count := cmd.Flags().Int("count", 3, fmt.Sprintf("how many runs of each job to print (1-%d)", maxPreview))
	asJSON := cmd.Flags().Bool("json", false, "print the result as JSON (ok, errors, warnings, jobs' next runs)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		start := time.Now()
		if *from != "" {
			t, err := time.Parse(time.RFC3339, *from)
			if err != nil {
				return ConfigError{fmt.Errorf("--from %q: not an RFC 3339 time such as 2026-03-28T12:00:00+01:00", *from)}
			}
			start = t
		}
		if *count < 1 || *count > maxPreview {
			return ConfigError{fmt.Errorf("--count %d: want 1 to %d", *count, maxPreview)}
		}
		if len(args) == 1 {
			rf.s.ConfigPath = args[0]
			_ = cmd.Flags().Set("config", args[0])
		}
		rep := checkReport{File: rf.s.ConfigPath, From: start, Warnings: []string{}, Errors: []string{}, Jobs: []checkJob{}}
		rc, err := rf.load()
		if err == nil {
			rep.OK, rep.Mode, rep.Warnings = true, rc.s.Mode, append(append(rep.Warnings, rc.warnings...), rc.checkOnly...)
			if g, ok := rc.ms.(guaranteed); ok {
				rep.Guarantee = g.guaranteeLine()
			}
			for _, j := range rc.file.Jobs {
				next, err := jobs.NextN(j.Schedule, start, *count)
				if err != nil { // cannot happen: load validated the schedule
					return ConfigError{fmt.Errorf("%s: job %q: %w", rc.file.Path, j.Name, err)}
				}
				zone := "local"
				if len(next) > 0 && next[0].Location() != time.Local {
					zone = next[0].Location().String()
				}
				rep.Jobs = append(rep.Jobs, checkJob{Name: j.Name, Schedule: j.Schedule, Zone: zone, Next: next})
			}
			for _, sv := range rc.file.Services {
				rep.Services = append(rep.Services, sv.Name)
			}
		} else {
			rep.Errors = strings.Split(err.Error(), "\n")
		}
		if *asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if eerr := enc.Encode(rep); eerr != nil {
				return eerr
			}
			if err != nil {
				return ConfigError{silentError{err}}
			}
			return nil
		}
		if err != nil {
			return err
		}
		rep.print(cmd.OutOrStdout(), cmd.ErrOrStderr())
		return nil
	}
	return cmd
}

// guaranteed is a mode's settings that know the guarantee run will log
// (udp): check-config prints the same line.
type guaranteed interface{ guaranteeLine() string }

// checkReport is what check-config found.
type checkReport struct {
	File string    `json:"file"`
	From time.Time `json:"from"`
	OK   bool      `json:"ok"`
	Mode string    `json:"mode,omitempty"`
	// Guarantee is the guarantee line run logs at start (udp mode).
	Guarantee string     `json:"guarantee,omitempty"`
	Errors    []string   `json:"errors"`
	Warnings  []string   `json:"warnings"`
	Jobs      []checkJob `json:"jobs"`
	// Services are the leader-only services' names.
	Services []string `json:"services,omitempty"`
}

// checkJob is one job's schedule and next three runs.
type checkJob struct {
	Name     string      `json:"name"`
	Schedule string      `json:"schedule"`
	Zone     string      `json:"zone"`
	Next     []time.Time `json:"next"`
}

func (r checkReport) print(stdout, stderr io.Writer) {
	for _, w := range r.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(stdout, "%s: ok (mode %s, %d jobs", r.File, r.Mode, len(r.Jobs))
	if len(r.Services) > 0 {
		fmt.Fprintf(stdout, ", services %s", strings.Join(r.Services, ", "))
	}
	fmt.Fprintln(stdout, ")")
	if r.Guarantee != "" {
		fmt.Fprintf(stdout, "  %s\n", r.Guarantee)
	}
	for _, j := range r.Jobs {
		fmt.Fprintf(stdout, "  %s: %q (%s), next %d after %s:\n", j.Name, j.Schedule, j.Zone,
			len(j.Next), r.From.Format(time.RFC3339))
		for _, t := range j.Next {
			fmt.Fprintf(stdout, "    %s\n", t.Format(time.RFC3339))
		}
	}
}
