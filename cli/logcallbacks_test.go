package cli

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lanleader/lanleader/election"
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

// TestNoLeaderLineNamesPreviousAndReadsBack: a lost leader is logged with
// the leader it replaces (WARN; INFO while stopping), and the demo reads
// the line back as "no leader" (it printed "follows none known (term 0)").
func TestNoLeaderLineNamesPreviousAndReadsBack(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cb := logCallbacks(ctx, logger, "a", nil)
	cb.OnNewLeader(election.LeaderInfo{ID: "b", Term: 7})
	buf.Reset()
	cb.OnNewLeader(election.LeaderInfo{})
	line := buf.String()
	assert.Contains(t, line, `"level":"WARN"`)
	assert.Contains(t, line, `"leader":"none known","previous":"b","previous_term":7`)
	ev := parseDemoLine([]byte(line), time.Now())
	assert.Equal(t, evLeaderChanged, ev.kind)
	assert.Empty(t, ev.leader, "the demo sees no leader, not a node named %q", noLeaderKnown)

	cancel()
	buf.Reset()
	cb.OnNewLeader(election.LeaderInfo{})
	assert.Contains(t, buf.String(), `"level":"INFO"`, "no leader while stopping is expected")
}
