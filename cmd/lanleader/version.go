package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lanleader/lanleader/internal/version"
)

func versionCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "lanleader %s (%s)\n", version.String(), version.GoVersion())
	return nil
}
