package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJobFailureIsLoudAndNotifies runs a leader whose job always exits 7
// with one retry: the failed attempt is logged at WARN, the final failure at
// ERROR with the exit code and the output, and both failure hooks run with
// the run's details in their environment.
func TestJobFailureIsLoudAndNotifies(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "l.yaml")
	dump := `env | grep -E '^LANLEADER_(HOOK|JOB|RUN_ID|EXIT_CODE|ATTEMPT|OUTPUT|ERROR)=' | sort > ` + dir + `/$LANLEADER_HOOK`
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`jobs:
  - name: flaky
    schedule: "* * * * * *"
    shell: echo "boom $LANLEADER_RUN_ID"; exit 7
    retries: 1
    on_failure: %q
hooks:
  on_job_failure: %q
`, dump, dump)), 0o600))
	guard := time.After(30 * time.Second)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	lines, exit := daemonLog(t, ctx, "--mode=static", "--node-id", "a", "--leader", "a", "--config", cfg)

	warn := waitFor(t, guard, lines, "the failed attempt", msgIs("jobs: attempt failed; retrying"))
	assert.Equal(t, "WARN", warn["level"])
	assert.EqualValues(t, 7, warn["exit_code"])
	failed := waitFor(t, guard, lines, "the final failure", msgIs("jobs: run failed"))
	assert.Equal(t, "ERROR", failed["level"])
	assert.EqualValues(t, 7, failed["exit_code"])
	assert.EqualValues(t, 2, failed["attempts"])
	runID := failed["run_id"].(string)
	assert.Equal(t, []any{"boom " + runID}, failed["output_tail"])
	for seen := 0; seen < 2; {
		m := waitFor(t, guard, lines, "both failure hooks", msgIs("hooks: done"))
		if m["hook"] == "on_failure" || m["hook"] == "on_job_failure" {
			seen++
		}
	}
	stop()
	assert.Equal(t, ExitOK, <-exit)

	for _, hook := range []string{"on_failure", "on_job_failure"} {
		b, err := os.ReadFile(filepath.Join(dir, hook))
		require.NoError(t, err, hook)
		env := string(b)
		assert.Contains(t, env, "LANLEADER_HOOK="+hook+"\n")
		assert.Contains(t, env, "LANLEADER_JOB=flaky\n")
		assert.Contains(t, env, "LANLEADER_EXIT_CODE=7\n")
		assert.Contains(t, env, "LANLEADER_ATTEMPT=2\n")
		assert.Contains(t, env, "LANLEADER_ERROR=exit 7\n")
		assert.True(t, strings.Contains(env, "LANLEADER_OUTPUT=boom "), hook)
		assert.Contains(t, env, "LANLEADER_RUN_ID=", hook)
	}
}
