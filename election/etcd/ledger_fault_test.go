package etcd

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/etcd/etcdtest"
	"github.com/lanleader/lanleader/jobs"
)

// faultTTL is the session TTL of the ledger fault tests: long enough that
// answers held back for a second, or writes etcd refuses, never put the
// lease in doubt, so the leadership stays the same throughout.
const faultTTL = 6 * time.Second

// startFaulty starts a ledger node with faultTTL, talking to etcd through a
// proxy if proxied; its Ledger's log goes to the returned recordLog.
func (c *cluster) startFaulty(id string, proxied bool) (*ledgerNode, *recordLog) {
	logs := &recordLog{}
	ln := c.startLedgerWith(id, proxied, func(cfg *Config) { cfg.SessionTTL = faultTTL }, slog.New(logs))
	return ln, logs
}

// etcdReader returns a function reading a ledger key's entry straight from
// etcd (not through any node's proxy): the zero entry if the key is absent.
func etcdReader(t *testing.T) func(key string) (jobs.LedgerEntry, error) {
	client, err := etcdtest.NewClient(server.Endpoint)
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	return func(key string) (jobs.LedgerEntry, error) {
		resp, err := client.Get(context.Background(), key)
		if err != nil || len(resp.Kvs) == 0 {
			return jobs.LedgerEntry{}, err
		}
		l, err := jobs.DecodeLedger(resp.Kvs[0].Value)
		if err == nil && len(l.Entries) != 1 {
			err = fmt.Errorf("%d entries at %s", len(l.Entries), key)
		}
		if err != nil {
			return jobs.LedgerEntry{}, err
		}
		return l.Entries[0], nil
	}
}

// waitStored waits until etcd holds want at key.
func waitStored(t *testing.T, read func(string) (jobs.LedgerEntry, error), key string, want jobs.LedgerEntry, what string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got, err := read(key)
		assert.NoError(c, err)
		assert.Equal(c, want, got, "etcd at %s", key)
	}, 10*time.Second, 10*time.Millisecond, what)
}

// TestLedgerCarriesOnAfterLostAnswers: etcd applies a run's entry but its
// answer comes after the leader gave up waiting, and the next write's
// answer is lost too (etcd refused that one: its guard named the revision
// before). The leader must not take its own write for another writer's:
// the job's outcome is written and its next run starts.
func TestLedgerCarriesOnAfterLostAnswers(t *testing.T) {
	c := newCluster(t)
	a, logs := c.startFaulty("a", true)
	lead := c.oneLeader(10 * time.Second)
	read := etcdReader(t)
	key := a.ledger.Key("backup")
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	at := func(minute int, o jobs.Outcome) jobs.LedgerEntry {
		return entry("backup", now.Add(time.Duration(minute)*time.Minute), o, lead.term)
	}
	require.NoError(t, a.ledger.Commit(ctx, "backup", at(0, jobs.OutcomeRunning)))

	a.proxy.DelayAnswers(time.Second)
	for minute := 1; minute <= 2; minute++ {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := a.ledger.Commit(cctx, "backup", at(minute, jobs.OutcomeRunning))
		cancel()
		require.Error(t, err, "the answer came in time")
	}
	waitStored(t, read, key, at(1, jobs.OutcomeRunning), "the first write whose answer was lost")
	a.proxy.AnswersOnTime()

	// The runner records the refused start as cancelled; Sync writes it.
	a.runner.set(at(1, jobs.OutcomeCancelled))
	a.ledger.Sync()
	waitStored(t, read, key, at(1, jobs.OutcomeCancelled), "the outcome after the lost answers")

	require.NoError(t, a.ledger.Commit(ctx, "backup", at(3, jobs.OutcomeRunning)), "log:\n%s", logs)
	got, err := read(key)
	require.NoError(t, err)
	assert.Equal(t, at(3, jobs.OutcomeRunning), got)
	c.checkExclusive()
	assert.Len(t, c.snapshot(), 1, "one leadership throughout")
}
