package cli

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStoppedLeadingSaysWhy: the "stopped leading" line names the reason:
// the process stopping, else what the mode says, else unknown.
func TestStoppedLeadingSaysWhy(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	calls := 0
	why := func() string { calls++; return "a better leader or claim was heard" }
	ctx, cancel := context.WithCancel(context.Background())
	cb := logCallbacks(ctx, logger, "a", why)
	cb.OnStartedLeading(ctx, 3)
	assert.Equal(t, 1, calls, "the start notes the state")
	cb.OnStoppedLeading()
	assert.Contains(t, buf.String(), `msg="stopped leading" reason="a better leader or claim was heard"`)
	cancel()
	cb.OnStoppedLeading()
	assert.Contains(t, buf.String(), `msg="stopped leading" reason=stopping`)
	logCallbacks(context.Background(), logger, "a", nil).OnStoppedLeading()
	assert.Contains(t, buf.String(), `msg="stopped leading" reason=unknown`)
}
