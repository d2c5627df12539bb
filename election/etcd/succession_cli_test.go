package etcd_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/election/etcd"
	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

// TestRunModeSuccessorWaitsForTheOldRun runs two lanleader nodes in etcd
// mode whose job ignores SIGTERM (kill_grace 3 s) and holds a file lock
// while it runs. The leader key is deleted by hand while the leader's run
// goes on: the other node leads at once, while the old run dies only by
// SIGKILL, kill_grace after the old leader noticed. The new leader must
// rerun the instant (rerun_interrupted) only once the old run can no
// longer be going: its run takes the lock. Before, it reran it at once,
// beside the dying run, and the lock was taken.
func TestRunModeSuccessorWaitsForTheOldRun(t *testing.T) {
	prefix := "/test/" + t.Name()
	cfg, out := jobConfig(t, prefix, fmt.Sprintf(`  - name: locked
    schedule: "*/2 * * * * *"
    rerun_interrupted: true
    kill_grace: 3s
    command: [%%q, "-test.run=^$"]
    env:
      LANLEADER_ETCD_TEST_JOB_OUT: %%s
      LANLEADER_ETCD_TEST_LOCK: %s
`, filepath.Join(t.TempDir(), "lock")))

	startDaemon(t, cfg, "a")
	client, err := etcdtest.NewClient(etcd.ServerEndpoint())
	require.NoError(t, err)
	defer client.Close()
	first := waitRuns(t, out, func(rs []run) bool { return len(rs) >= 1 }, "the first run")[0]
	require.Equal(t, "locked", first.verdict)
	startDaemon(t, cfg, "b")
	require.Eventually(t, func() bool {
		resp, err := client.Get(context.Background(), prefix+"/election/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && resp.Count == 2
	}, 20*time.Second, 20*time.Millisecond, "b in line")

	resp, err := client.Get(context.Background(), prefix+"/election/", clientv3.WithFirstCreate()...)
	require.NoError(t, err)
	require.Equal(t, "a", string(resp.Kvs[0].Value))
	_, err = client.Delete(context.Background(), string(resp.Kvs[0].Key))
	require.NoError(t, err)
	deleted := time.Now()
	rs := waitRuns(t, out, func(rs []run) bool { return countBy(rs, other("a")) >= 1 }, "b's rerun")
	rerun := rs[len(rs)-1]
	t.Logf("b reran %s %v after the deletion", rerun.instant, time.Since(deleted).Round(10*time.Millisecond))
	assert.Equal(t, first.instant, rerun.instant, "the interrupted instant is rerun")
	for _, r := range rs {
		assert.Equal(t, "locked", r.verdict, "a run started while another was going: %+v; runs: %+v", r, rs)
	}
	if t.Failed() {
		t.Logf("runs:\n%s", strings.TrimSpace(fmt.Sprint(rs)))
	}
}
