package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/jobs"
)

func newCheckConfigCmd(modes []Mode) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check-config [FILE]",
		Short: "validate a config file and print each job's next runs",
		Long: `Check-config validates the config file (FILE, or --config) exactly as run
does, with the same flags, without touching the network, and prints each
job's next three run times. It exits 3 if run would refuse the file.`,
		Example: `  lanleader check-config /etc/lanleader/lanleader.yaml
  lanleader check-config --config app.yaml --mode=static --leader db1`,
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
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			rf.s.ConfigPath = args[0]
			_ = cmd.Flags().Set("config", args[0])
		}
		rc, err := rf.load()
		if err != nil {
			return err
		}
		stdout := cmd.OutOrStdout()
		fmt.Fprintf(stdout, "%s: ok (mode %s, %d jobs)\n", rc.file.Path, rc.s.Mode, len(rc.file.Jobs))
		now := time.Now()
		for _, j := range rc.file.Jobs {
			next, err := jobs.NextN(j.Schedule, now, 3)
			if err != nil {
				return ConfigError{fmt.Errorf("%s: job %q: %w", rc.file.Path, j.Name, err)}
			}
			times := make([]string, len(next))
			for i, t := range next {
				times[i] = t.Format("2006-01-02 15:04:05 MST")
			}
			fmt.Fprintf(stdout, "  %-20s %-22s next: %s\n", j.Name, j.Schedule, strings.Join(times, ", "))
		}
		return nil
	}
	return cmd
}
