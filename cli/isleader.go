package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/httpapi"
)

// Exit codes of is-leader beyond ExitOK (leads and may act), ExitUsage and
// ExitConfig.
const (
	// exitNotLeader: the node answered that it does not lead, or leads but
	// may not act now.
	exitNotLeader = 1
	// exitCannotTell: the node's endpoint gave no usable answer
	// (unreachable, timed out, another reply): whether it may act is not
	// known, so a script must not act either.
	exitCannotTell = 4
)

func newIsLeaderCmd() *cobra.Command {
	var (
		addr, configPath string
		asJSON, quiet    bool
		timeout          time.Duration
	)
	cmd := &cobra.Command{
		Use:   "is-leader",
		Short: "exit 0 if this node leads and may act now, 1 if not",
		Long: `Is-leader asks the local node's status endpoint (run's --http) whether it
leads and may act now (GET /leader): the same check the node's job runner
makes before it starts a run (in udp quorum mode: it leads, its lease
holds, it was not paused; and lanleader is not stopping). It prints one line
saying so and exits with:

  0  this node leads and may act
  1  it does not: it follows, is a candidate, or leads but may not act now
  2  usage error (unknown flag, unexpected argument)
  3  the config file given with --config is invalid or has no election.http
  4  cannot tell: the endpoint did not answer (lanleader not running, wrong
     --http, timed out) or answered something else; do not act

A script that acts only on exit 0 never acts on a node that cannot tell.
An answer is a moment's truth: a node can stop leading right after it; see
docs/applications.md for what that means and what to do about it.`,
		Example: `  lanleader is-leader && ./send-digest
  lanleader is-leader --quiet --config /etc/lanleader/lanleader.yaml || exit 0
  lanleader is-leader --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addr, err := endpointAddr(cmd, configPath, addr)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			doc, err := httpapi.FetchLeader(ctx, addr)
			if err != nil {
				return exitStatus{exitCannotTell, fmt.Errorf("cannot tell: is lanleader running with --http %s? %s", addr, strings.TrimPrefix(err.Error(), "httpapi: "))}
			}
			if !quiet {
				if err := printDoc(cmd.OutOrStdout(), asJSON, doc, func(w io.Writer) error { return writeLeaderLine(w, doc) }); err != nil {
					return err
				}
			}
			if !doc.MayAct {
				return exitStatus{exitNotLeader, silentError{fmt.Errorf("%s may not act: %s", doc.Node, doc.Reason)}}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "http", httpapi.DefaultAddr, "address of the node's status endpoint (its --http)")
	fs.StringVarP(&configPath, "config", "c", "", "read the endpoint address from this config file")
	fs.BoolVar(&asJSON, "json", false, "print the JSON document (/leader)")
	fs.BoolVarP(&quiet, "quiet", "q", false, "print nothing; only the exit code tells")
	fs.DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long (exit 4)")
	return cmd
}

// writeLeaderLine says in one line what /leader answered.
func writeLeaderLine(w io.Writer, doc httpapi.LeaderDoc) error {
	var err error
	if doc.MayAct {
		_, err = fmt.Fprintf(w, "%s leads term %d and may act\n", doc.Node, doc.Term)
	} else {
		_, err = fmt.Fprintf(w, "%s may not act: %s\n", doc.Node, doc.Reason)
	}
	return err
}
