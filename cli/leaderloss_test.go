package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// check-config (and run, at start: the same warnings) says what
// on_leader_loss: finish without a timeout means where the mode bounds a
// deposed leader (udp quorum mode): the next leader cannot wait such a run
// out, and reruns it (or starts its next instant) while it may still be
// going. Naming the file's line, the job and the remedy. Not for a finish
// job with a timeout, a cancel job, or without quorum.
func TestCheckConfigWarnsOfFinishRunsWithoutTimeout(t *testing.T) {
	dir := t.TempDir()
	write := func(clusterSize string) string {
		file := filepath.Join(dir, "quorum"+clusterSize+".yaml")
		require.NoError(t, os.WriteFile(file, []byte(`election:
  mode: udp
  cluster_size: `+clusterSize+`
jobs:
  - name: backup
    schedule: "0 2 * * *"
    on_leader_loss: finish
    rerun_interrupted: true
    shell: backup.sh
  - name: report
    schedule: "0 6 * * *"
    on_leader_loss: finish
    shell: report.sh
  - name: bounded
    schedule: "0 3 * * *"
    on_leader_loss: finish
    rerun_interrupted: true
    timeout: 2h
    shell: bounded.sh
  - name: cancels
    schedule: "0 4 * * *"
    rerun_interrupted: true
    shell: cancels.sh
`), 0o600))
		return file
	}

	file := write("3")
	code, _, stderr := runCLI(t, "check-config", file)
	require.Equal(t, ExitOK, code, stderr)
	var warned []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "finish without a timeout") {
			warned = append(warned, l)
		}
	}
	require.Len(t, warned, 2, stderr)
	assert.Contains(t, warned[0], file+`:7: jobs[0].on_leader_loss: job "backup"`)
	assert.Contains(t, warned[0], "runs the job again (rerun_interrupted) while the run may still be going")
	assert.Contains(t, warned[0], "Set timeout")
	assert.Contains(t, warned[1], file+`:12: jobs[1].on_leader_loss: job "report"`)
	assert.Contains(t, warned[1], "starts the job's next instant while the run may still be going")

	code, _, stderr = runCLI(t, "check-config", write("0"))
	require.Equal(t, ExitOK, code, stderr)
	assert.NotContains(t, stderr, "finish without a timeout", "without quorum nothing bounds any run: no such warning")
}
