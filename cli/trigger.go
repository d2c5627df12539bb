package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/config"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/jobs"
	"github.com/lanleader/lanleader/trigger"
)

// exitStatus ends a command with a given exit code (trigger --wait exits
// with the job's status).
type exitStatus struct {
	code int
	err  error
}

func (e exitStatus) Error() string { return e.err.Error() }
func (e exitStatus) Unwrap() error { return e.err }

// pollEvery is how often trigger --wait asks how the run is doing.
const pollEvery = 500 * time.Millisecond

func newTriggerCmd() *cobra.Command {
	s := defaultUDPSettings()
	var (
		configPath string
		timeout    time.Duration
		wait       bool
		waitFor    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "trigger JOB",
		Short: "run a job once, now, on the current leader",
		Long: `Trigger asks the udp-mode cluster's leader (from any node or any host on the
LAN, with the same cluster flags and key file as "who") to run JOB once,
at once. The leader applies the job's overlap policy, records the run in its
ledger as a manual run with its own run id (never as a scheduled instant),
and answers with the run id. With --wait, trigger then waits for the run to
end and exits with the job's exit status (0 ok; the job's code when it
failed with one; 1 otherwise).

The run request carries a ticket the leader issued for it a moment before,
which the leader decides once: a replayed request runs nothing, whatever
the clocks say. Every request is sent again while no answer comes (after
0.2 s, 0.4 s, 0.8 s, then every 1.6 s, within --timeout), so one lost frame
costs a moment, not the run: a run request sent again with the same ticket
gets the answer of the first (the same run id) and starts nothing. If no
answer comes at all, the run may or may not have started ("lanleader jobs"
on a node tells). The cluster refuses requests without its key.`,
		Example: `  lanleader trigger nightly-backup
  lanleader trigger --config /etc/lanleader/lanleader.yaml --wait nightly-backup
  lanleader trigger --cluster office --secret-file /etc/lanleader/key report`,
		Args: exactArgs(1, "job name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if configPath != "" {
				f, err := config.LoadWith(configPath, config.Options{ElectionKeys: electionKeys(BuiltinModes())})
				if err != nil {
					return ConfigError{err}
				}
				s.merge(&Source{File: f, flags: cmd.Flags()})
			}
			return runTrigger(cmd, s, args[0], timeout, wait, waitFor)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&configPath, "config", "c", "", "take cluster, port, bind, transport, peers and key from this config file")
	fs.StringVar(&s.Cluster, "cluster", s.Cluster, "cluster name")
	s.transportFlags(fs, "")
	fs.StringVar(&s.SecretFile, "secret-file", "", "file of HMAC keys, if the cluster uses them")
	fs.DurationVar(&timeout, "timeout", 2*time.Second, "how long to wait for the leader's answer")
	fs.BoolVar(&wait, "wait", false, "wait for the run to end and exit with the job's status")
	fs.DurationVar(&waitFor, "wait-timeout", 0, "with --wait, give up after this long (0: no limit)")
	return cmd
}

func runTrigger(cmd *cobra.Command, s *udpSettings, job string, timeout time.Duration, wait bool, waitFor time.Duration) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if _, err := (trigger.Request{Op: trigger.OpRun, Name: job}).Encode(); err != nil {
		return usageError{err}
	}
	t, keyring, err := s.client()
	if err != nil {
		return err
	}
	defer t.Close()
	// ra is the last answer's envelope: who answered, under which term.
	var ra udp.RequestAnswer
	send := func(ctx context.Context, p []byte, repeat bool) ([]byte, bool, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		resend := udp.Resend{}
		if repeat {
			resend = udp.DefaultResend
		}
		var err error
		ra, err = udp.Request(ctx, t, s.Cluster, keyring, p, resend)
		return ra.Payload, ra.Send == 1, err
	}

	a, err := trigger.RunJob(cmd.Context(), send, job)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		hint := ""
		if keyring == nil {
			hint = " (if the cluster uses a key, pass --secret-file or --config)"
		}
		if errors.Is(err, trigger.ErrNothingRan) {
			return fmt.Errorf("no leader of cluster %q answered within %v%s; nothing ran", s.Cluster, timeout, hint)
		}
		return fmt.Errorf("no leader of cluster %q answered within %v%s; the run may or may not have started: see 'lanleader jobs'", s.Cluster, timeout, hint)
	case errors.Is(err, trigger.ErrMayHaveRun):
		return fmt.Errorf("no answer came to the run request's first send, and %s, which answered it sent again, does not know its ticket "+
			"(leadership changed, a leader restarted, or %s runs an older lanleader): the run may or may not have started: see 'lanleader jobs'",
			ra.Leader, ra.Leader)
	case err != nil:
		return err
	case a.Code == trigger.Refused:
		return fmt.Errorf("%s refuses trigger requests: the cluster has no key, so any device on the LAN could send them. "+
			"Give the nodes a key (lanleader keygen FILE; election.secret_file: FILE on each; --secret-file or --config here), "+
			"or accept requests from anyone on the LAN with election.trigger_without_key: true on the nodes; nothing ran", ra.Leader)
	case a.Code == trigger.BadRequest:
		return fmt.Errorf("%s refused: %s: %s (does the leader run an older lanleader than this one?)", ra.Leader, a.Code, a.Message)
	case a.Code != trigger.Started:
		return fmt.Errorf("%s refused: %s: %s", ra.Leader, a.Code, a.Message)
	}
	fmt.Fprintf(stdout, "started %s on %s (term %d), run id %s\n", job, ra.Leader, ra.Term, a.RunID)
	if !wait {
		return nil
	}

	ctx := cmd.Context()
	if waitFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, waitFor)
		defer cancel()
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	misses := 0
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up waiting for run %s: %w", a.RunID, ctx.Err())
		case <-tick.C:
		}
		st, err := trigger.Status(ctx, send, a.RunID)
		switch {
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			if misses++; misses%10 == 0 {
				fmt.Fprintf(stderr, "no answer from the leader for a while; still waiting for run %s\n", a.RunID)
			}
			continue
		case err != nil:
			return err
		case st.Code == trigger.Running:
			continue
		case st.Code == trigger.UnknownRun:
			return fmt.Errorf("leader %s does not know run %s (leadership changed?): its outcome is unknown; see 'lanleader jobs'", ra.Leader, a.RunID)
		case st.Code != trigger.Finished:
			return fmt.Errorf("%s: %s: %s", ra.Leader, st.Code, st.Message)
		}
		fmt.Fprintf(stdout, "run %s %s (exit code %d)\n", a.RunID, st.Outcome, st.ExitCode)
		switch {
		case st.Outcome == jobs.OutcomeOK:
			return nil
		case st.ExitCode > 0 && st.ExitCode < 256:
			return exitStatus{st.ExitCode, fmt.Errorf("run %s %s: %s", a.RunID, st.Outcome, st.Message)}
		default:
			return fmt.Errorf("run %s %s: %s", a.RunID, st.Outcome, st.Message)
		}
	}
}
