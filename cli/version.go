package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/internal/version"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "lanleader %s (%s)\n", version.String(), version.GoVersion())
			return nil
		},
	}
}
