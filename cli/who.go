package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/config"
	"github.com/lanleader/lanleader/election/udp"
)

func newWhoCmd() *cobra.Command {
	s := defaultUDPSettings()
	var (
		configPath string
		timeout    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "who",
		Short: "ask the LAN who leads",
		Long: `Who sends a QUERY to the udp-mode cluster (by its transport: broadcast,
multicast, or unicast to --peers) and prints every leader that answers with
its term, address and round-trip time, then every witness that answers
with the leader it follows. Two leaders mean a split brain or a handover
in progress. With --config it takes the cluster, port, bind
address, transport, group, peers and key from the file.`,
		Example: `  lanleader who
  lanleader who --config /etc/lanleader/lanleader.yaml
  lanleader who --cluster office --secret-file /etc/lanleader/key`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath != "" {
				f, err := config.LoadWith(configPath, config.Options{ElectionKeys: electionKeys(BuiltinModes())})
				if err != nil {
					return ConfigError{err}
				}
				s.merge(&Source{File: f, flags: cmd.Flags()})
			}
			return who(cmd, s, timeout)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&configPath, "config", "c", "", "take cluster, port, bind, transport, peers and key from this config file")
	fs.StringVar(&s.Cluster, "cluster", s.Cluster, "cluster name")
	s.transportFlags(fs, "")
	fs.StringVar(&s.SecretFile, "secret-file", "", "file of HMAC keys, if the cluster uses them")
	fs.DurationVar(&timeout, "timeout", time.Second, "how long to wait for answers")
	return cmd
}

func who(cmd *cobra.Command, s *udpSettings, timeout time.Duration) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	t, keyring, err := s.client()
	if err != nil {
		return err
	}
	defer t.Close()

	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	answers, err := udp.Query(ctx, t, s.Cluster, keyring)
	if err != nil {
		return err
	}
	var leaders, witnesses []udp.Answer
	for _, a := range answers {
		if a.Witness != "" {
			witnesses = append(witnesses, a)
		} else {
			leaders = append(leaders, a)
		}
	}
	switch len(leaders) {
	case 0:
		if len(witnesses) > 0 {
			printWitnesses(stdout, witnesses)
		}
		return fmt.Errorf("no leader of cluster %q answered within %v", s.Cluster, timeout)
	case 1:
	default:
		fmt.Fprintf(stderr, "warning: %d nodes claim to lead (split brain or a handover in progress)\n", len(leaders))
	}
	fmt.Fprintf(stdout, "%-20s %-12s %-22s %s\n", "LEADER", "TERM", "ADDRESS", "RTT")
	for _, a := range leaders {
		fmt.Fprintf(stdout, "%-20s %-12d %-22s %v\n", a.Leader, a.Term, a.Addr, a.RTT.Round(10*time.Microsecond))
	}
	if len(witnesses) > 0 {
		fmt.Fprintln(stdout)
		printWitnesses(stdout, witnesses)
	}
	return nil
}

// printWitnesses lists the witnesses that answered and whom they follow.
func printWitnesses(w io.Writer, ws []udp.Answer) {
	fmt.Fprintf(w, "%-20s %-20s %-22s %s\n", "WITNESS", "FOLLOWS", "ADDRESS", "RTT")
	for _, a := range ws {
		follows := a.Leader
		if follows == "" {
			follows = "(no leader)"
		}
		fmt.Fprintf(w, "%-20s %-20s %-22s %v\n", a.Witness, follows, a.Addr, a.RTT.Round(10*time.Microsecond))
	}
}
