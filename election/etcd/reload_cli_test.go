package etcd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/etcd"
	"github.com/lanleader/lanleader/election/etcd/etcdtest"
	"github.com/lanleader/lanleader/jobs"
)

// TestReloadedJobsOutcomesReachEtcd runs a leader in etcd mode and reloads
// its config file with SIGHUP, as systemctl reload does: one job renamed,
// one added. Both new names' runs get their outcomes written to etcd, not
// only their 'running' entries (which the next leader would take for
// interrupted runs); the last run of the name that went away ends in etcd too.
func TestReloadedJobsOutcomesReachEtcd(t *testing.T) {
	dir := t.TempDir()
	prefix := "/test/" + t.Name()
	cfg := filepath.Join(dir, "lanleader.yaml")
	write := func(names ...string) {
		var b strings.Builder
		fmt.Fprintf(&b, "election:\n  mode: etcd\n  http: \"\"\n  etcd:\n    endpoints: [%s]\n    prefix: %s\n    session_ttl: 2s\njobs:\n",
			etcd.ServerEndpoint(), prefix)
		for _, n := range names {
			fmt.Fprintf(&b, "  - name: %s\n    schedule: \"* * * * * *\"\n    command: [\"true\"]\n", n)
		}
		require.NoError(t, os.WriteFile(cfg, []byte(b.String()), 0o600))
	}
	client, err := etcdtest.NewClient(etcd.ServerEndpoint())
	require.NoError(t, err)
	defer client.Close()
	// outcome returns the outcome etcd holds for job's scheduled runs.
	outcome := func(job string) (jobs.Outcome, error) {
		resp, err := client.Get(context.Background(), prefix+"/ledger/"+job)
		if err != nil || len(resp.Kvs) == 0 {
			return jobs.OutcomeNone, err
		}
		l, err := jobs.DecodeLedger(resp.Kvs[0].Value)
		if err != nil || len(l.Entries) != 1 {
			return jobs.OutcomeNone, fmt.Errorf("ledger/%s: %d entries, %v", job, len(l.Entries), err)
		}
		return l.Entries[0].Outcome, nil
	}
	waitOK := func(d *daemon, job string) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			o, err := outcome(job)
			assert.NoError(c, err)
			assert.Equal(c, jobs.OutcomeOK, o, "outcome of %s in etcd", job)
		}, 20*time.Second, 10*time.Millisecond, "log:\n%s", d.log)
	}

	write("before")
	a := startDaemon(t, cfg, "a")
	waitOK(a, "before")

	write("renamed", "added")
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(a.log.String(), "config reloaded") },
		20*time.Second, 10*time.Millisecond, "no reload; log:\n%s", a.log)
	waitOK(a, "renamed")
	waitOK(a, "added")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		o, err := outcome("before")
		assert.NoError(c, err)
		assert.NotEqual(c, jobs.OutcomeRunning, o, "the last run of the name that went away")
	}, 20*time.Second, 10*time.Millisecond, "log:\n%s", a.log)
}
