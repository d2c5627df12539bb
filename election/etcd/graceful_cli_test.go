package etcd_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/cli"
	"github.com/lanleader/lanleader/election/etcd"
	"github.com/lanleader/lanleader/election/etcd/etcdtest"
	"github.com/lanleader/lanleader/jobs"
)

// TestGracefulStopRecordsHowRunsEnded stops an etcd-mode leader gracefully
// while its job's run (which ignores SIGTERM: killed kill_grace later) and
// its service's copy go on. The stop ends both before the node resigns,
// and etcd must say so once the node has resigned: a next leader that read them still running would wait out
// their stop time and take the run for interrupted (rerun_interrupted runs
// it again). Before, the outcomes were written in the background and lost
// the race with the resignation.
func TestGracefulStopRecordsHowRunsEnded(t *testing.T) {
	prefix := "/test/" + t.Name()
	cfg, _ := jobConfig(t, prefix, fmt.Sprintf(`  - name: long
    schedule: "* * * * * *"
    kill_grace: 1s
    command: [%%q, "-test.run=^$"]
    env:
      LANLEADER_ETCD_TEST_JOB_OUT: %%s
      LANLEADER_ETCD_TEST_LOCK: %s
services:
  - name: scheduler
    command: [sleep, "30"]
`, filepath.Join(t.TempDir(), "lock")))
	client, err := etcdtest.NewClient(etcd.ServerEndpoint())
	require.NoError(t, err)
	defer client.Close()
	// entry returns the entry etcd holds under the ledger's key name.
	entry := func(name string) jobs.LedgerEntry {
		resp, err := client.Get(context.Background(), prefix+"/ledger/"+name)
		if err != nil || len(resp.Kvs) == 0 {
			return jobs.LedgerEntry{}
		}
		l, err := jobs.DecodeLedger(resp.Kvs[0].Value)
		if err != nil || len(l.Entries) != 1 {
			return jobs.LedgerEntry{}
		}
		return l.Entries[0]
	}
	service := jobs.ServiceLedgerName("scheduler")

	a := startDaemon(t, cfg, "a")
	require.Eventually(t, func() bool {
		return entry("long").Outcome == jobs.OutcomeRunning && entry(service).Outcome == jobs.OutcomeRunning
	}, 20*time.Second, 10*time.Millisecond, "a's run and copy; log:\n%s", a.log)
	a.cancel()
	require.Equal(t, cli.ExitOK, <-a.done)
	a.done <- cli.ExitOK // for the cleanup
	assert.Equal(t, jobs.OutcomeCancelled, entry("long").Outcome, "the run a's stop cancelled; log:\n%s", a.log)
	assert.Equal(t, jobs.OutcomeOK, entry(service).Outcome, "the copy a's stop ended; log:\n%s", a.log)
}
