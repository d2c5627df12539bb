package cli

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/election/udp/wire"
)

func newKeygenCmd() *cobra.Command {
	var group string
	cmd := &cobra.Command{
		Use:   "keygen [FILE]",
		Short: "make a cluster key file (mode 0600)",
		Long: `Keygen makes a new random cluster key (32 bytes, hex) for election.secret_file.
With FILE it creates FILE with mode 0600, or 0640 and the group --group (for a
daemon that runs as a user of that group, as the packages' systemd unit runs as
lanleader), never replacing a file that exists (a cluster's key is changed by
rotation, docs/wire.md), and says what to do next; without FILE, it prints the
key line, for a file made elsewhere.

A cluster without a key authenticates nothing: any device on the LAN can
claim leadership, and its nodes refuse "lanleader trigger" requests.`,
		Example: `  sudo lanleader keygen --group lanleader /etc/lanleader/lanleader.key
  sudo lanleader keygen /etc/lanleader.key
  lanleader keygen | ssh node2 'sudo install -m 0600 /dev/stdin /etc/lanleader.key'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("want at most one FILE, got %d: %s", len(args), strings.Join(args, " "))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				if group != "" {
					return usageError{fmt.Errorf("--group needs a FILE")}
				}
				fmt.Fprintln(cmd.OutOrStdout(), wire.NewKeyLine())
				return nil
			}
			path, gid, mode := args[0], -1, "0600"
			if group != "" {
				g, err := user.LookupGroup(group)
				if err != nil {
					return ConfigError{fmt.Errorf("--group %s: %w", group, err)}
				}
				if gid, err = strconv.Atoi(g.Gid); err != nil {
					return ConfigError{fmt.Errorf("--group %s: gid %q is not a number", group, g.Gid)}
				}
				mode = "0640, group " + group
			}
			comment := fmt.Sprintf("lanleader cluster key, made %s by lanleader keygen; the first key signs",
				time.Now().UTC().Format(time.DateOnly))
			if err := wire.WriteKeyFile(path, comment, gid); err != nil {
				return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "wire: "))
			}
			fmt.Fprintf(cmd.OutOrStdout(), `wrote a new key to %s (mode %s).
next: copy it to every node (same content and mode, readable by the user lanleader runs as),
set "secret_file: %s" under election: in each node's config, and restart the nodes together;
"lanleader trigger" and "lanleader who" then need --config or --secret-file %s.
`, path, mode, path, path)
			return nil
		},
	}
	cmd.Flags().StringVar(&group, "group", "", "make FILE mode 0640, owned by this group (the daemon's)")
	return cmd
}
