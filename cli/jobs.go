package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/jobs"
)

func newJobsCmd() *cobra.Command {
	var (
		addr    string
		asJSON  bool
		runs    int
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "list jobs with their next instants and recent runs",
		Long: `Jobs asks the local node's status endpoint (run's --http) for every job's
schedule, next instants and last runs: scheduled instant (or request time of
a manual run), node, term, start, duration, outcome, exit code, attempts and
run id. A node lists the runs it made and those it heard of in the leaders'
ledgers (marked "heard": only instant, node, term and outcome are known).`,
		Example: `  lanleader jobs
  lanleader jobs --runs 5
  lanleader jobs --json | jq '.jobs[] | {name, last: .runs[0].outcome}'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runs < 1 || runs > httpapi.MaxRuns {
				return usageError{fmt.Errorf("--runs %d: want 1-%d", runs, httpapi.MaxRuns)}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			doc, err := httpapi.FetchJobs(ctx, addr, runs)
			if err != nil {
				return fmt.Errorf("is lanleader running with --http %s? %s", addr, strings.TrimPrefix(err.Error(), "httpapi: "))
			}
			return printDoc(cmd.OutOrStdout(), asJSON, doc, func(w io.Writer) error { return httpapi.WriteJobs(w, doc) })
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "http", httpapi.DefaultAddr, "address of the node's status endpoint (its --http)")
	fs.BoolVar(&asJSON, "json", false, "print the JSON document (/jobs)")
	fs.IntVar(&runs, "runs", jobs.DefaultHistorySize, "recent runs to show per job")
	fs.DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}
