package jobs

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LANLEADER_SCHEDULED_AT and the logs carry the instant in UTC, so nodes in
// different zones give one key for one instant.
func TestScheduledAtIsUTC(t *testing.T) {
	var logs bytes.Buffer
	r := newTestRunnerCfg(t, testConfig{Node: "n1", Jobs: []Spec{everyMinute("m")},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil)
	berlin := mustZone(t, "Europe/Berlin")
	rec := &RunRecord{ScheduledAt: time.Date(2026, 7, 1, 2, 30, 0, 0, berlin)}
	env := envMap(r.runEnv(&r.jobs[0].spec, r.runIdentity(&r.jobs[0].spec, rec)))
	assert.Equal(t, "2026-07-01T00:30:00Z", env["LANLEADER_SCHEDULED_AT"])

	r.exec = (&fakeExec{}).run
	startRun(t, r, r.jobs[0], time.Date(2026, 7, 1, 2, 30, 0, 0, berlin), 1)
	require.NoError(t, r.Wait(t.Context()))
	assert.Contains(t, logs.String(), "scheduled_at=2026-07-01T00:30:00.000Z")
	assert.NotContains(t, logs.String(), "+02:00")
}
