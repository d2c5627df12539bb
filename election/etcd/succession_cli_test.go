package etcd_test

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
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/election/etcd"
	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

// TestRunModeSuccessorWaitsForTheOldRun runs two lanleader nodes in etcd
// mode whose job ignores SIGTERM (kill_grace 3 s) and holds a file lock
// while it runs, and takes the leadership from the leader while its run
// goes on: the old run dies only by SIGKILL, kill_grace after the old
// leader stopped acting. The new leader must rerun the instant
// (rerun_interrupted) only once the old run can no longer be going: its
// run takes the lock. Before, it reran it as it took over, beside the
// dying run, and found the lock taken. Two ways: the leader key deleted
// by hand (the next node leads at once, while the old leader acts until
// it notices), and the leader cut off from etcd through a proxy (it stops
// acting as its lease's local deadline passes; etcd expires the lease a
// little later and the next node leads). The wait outlasts the job's next
// instant, so the job sets a misfire_grace: by default an instant may start
// only until its next one.
func TestRunModeSuccessorWaitsForTheOldRun(t *testing.T) {
	for _, cut := range []bool{false, true} {
		t.Run(map[bool]string{false: "leader key deleted", true: "leader cut off"}[cut], func(t *testing.T) {
			testSuccessorWaits(t, cut)
		})
	}
}

func testSuccessorWaits(t *testing.T, cut bool) {
	prefix := "/test/" + t.Name()
	cfg, out := jobConfig(t, prefix, fmt.Sprintf(`  - name: locked
    schedule: "*/2 * * * * *"
    rerun_interrupted: true
    misfire_grace: 1m
    kill_grace: 3s
    command: [%%q, "-test.run=^$"]
    env:
      LANLEADER_ETCD_TEST_JOB_OUT: %%s
      LANLEADER_ETCD_TEST_LOCK: %s
`, filepath.Join(t.TempDir(), "lock")))
	proxy, err := etcdtest.NewProxy(etcd.ServerEndpoint())
	require.NoError(t, err)
	defer proxy.Close()

	startDaemon(t, viaEndpoint(t, cfg, proxy.Endpoint), "a")
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
	if cut {
		proxy.Cut()
		defer proxy.Heal() // so that a stops cleanly
	} else {
		_, err = client.Delete(context.Background(), string(resp.Kvs[0].Key))
		require.NoError(t, err)
	}
	taken := time.Now()
	rs := waitRuns(t, out, func(rs []run) bool { return countBy(rs, other("a")) >= 1 }, "b's rerun")
	rerun := rs[len(rs)-1]
	t.Logf("b reran %s %v after the leadership was taken", rerun.instant, time.Since(taken).Round(10*time.Millisecond))
	assert.Equal(t, first.instant, rerun.instant, "the interrupted instant is rerun")
	for _, r := range rs {
		assert.Equal(t, "locked", r.verdict, "a run started while another was going: %+v; runs: %+v", r, rs)
	}
	if t.Failed() {
		t.Logf("runs:\n%s", strings.TrimSpace(fmt.Sprint(rs)))
	}
}

// viaEndpoint returns a copy of config file cfg whose etcd endpoint is
// endpoint (a proxy the test can cut).
func viaEndpoint(t *testing.T, cfg, endpoint string) string {
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	from := "endpoints: [" + etcd.ServerEndpoint() + "]"
	require.Contains(t, string(b), from)
	file := cfg + ".proxied.yaml"
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(b), from, "endpoints: ["+endpoint+"]", 1)), 0o600))
	return file
}

// TestRunModeServiceSuccessorWaitsForTheOldCopy is the same for a
// leader-only service whose copy ignores SIGTERM (stop_grace 1 s) and holds
// the lock while it runs: the leader key is deleted by hand, the other
// node leads at once, and it must start its copy only once the old one
// can no longer be running (the old leader acts up to the TTL longer, its
// copy dies stop_grace after that), not beside it; and it does start it.
func TestRunModeServiceSuccessorWaitsForTheOldCopy(t *testing.T) {
	prefix := "/test/" + t.Name()
	cfg, out := jobConfig(t, prefix, fmt.Sprintf(`    []
services:
  - name: scheduler
    stop_grace: 1s
    command: [%%q, "-test.run=^$"]
    env:
      LANLEADER_ETCD_TEST_JOB_OUT: %%s
      LANLEADER_ETCD_TEST_LOCK: %s
`, filepath.Join(t.TempDir(), "lock")))

	startDaemon(t, cfg, "a")
	client, err := etcdtest.NewClient(etcd.ServerEndpoint())
	require.NoError(t, err)
	defer client.Close()
	first := waitRuns(t, out, func(rs []run) bool { return len(rs) >= 1 }, "a's copy")[0]
	require.Equal(t, run{instant: "service:scheduler", node: "a", term: first.term, verdict: "locked"}, first)
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
	rs := waitRuns(t, out, func(rs []run) bool { return countBy(rs, other("a")) >= 1 }, "b's copy")
	t.Logf("b started its copy %v after the deletion", time.Since(deleted).Round(10*time.Millisecond))
	for _, r := range rs {
		assert.Equal(t, "locked", r.verdict, "a copy started while another ran: %+v; copies: %+v", r, rs)
	}
}
