package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCmd writes man pages generated from the command definitions, the
// same ones help and shell completion come from.
func newManCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "man",
		Short: "write man pages (lanleader.1, lanleader-run.1, ...) into a directory",
		Long: `Man writes one man page per command into --dir (section 1), generated from
the same definitions as --help and shell completion.`,
		Example: `  lanleader man --dir /usr/local/share/man/man1 && mandb
  lanleader man --dir /tmp/man && man /tmp/man/lanleader-run.1`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("--dir %s: %w", dir, err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // reproducible pages: no generation date
			hdr := &doc.GenManHeader{Title: "LANLEADER", Section: "1", Source: "lanleader " + root.Version, Manual: "lanleader manual"}
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return fmt.Errorf("--dir %s: %w", dir, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "man pages written to %s\n", dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "directory to write the pages into (created if missing)")
	return cmd
}
