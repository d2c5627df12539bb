//go:build unix && !linux

package proc

import (
	"context"
	"log/slog"
)

// AdoptOrphans does nothing where there is no child subreaper: it waits
// for ctx.
func AdoptOrphans(ctx context.Context, _ *slog.Logger) error {
	<-ctx.Done()
	return nil
}
