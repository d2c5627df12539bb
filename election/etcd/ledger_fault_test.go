package etcd

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/election/etcd/etcdtest"
	"github.com/lanleader/lanleader/jobs"
)

// faultTTL is the session TTL of the ledger fault tests: long enough that
// answers held back for a second, or writes etcd refuses, never put the
// lease in doubt, so the leadership stays the same throughout.
const faultTTL = 6 * time.Second

// faulty is the fault tests' cluster: one node, a, leading with faultTTL,
// whose Ledger logs to logs, and a client of etcd that bypasses a's proxy.
type faulty struct {
	t    *testing.T
	c    *cluster
	a    *ledgerNode
	logs *recordLog
	term uint64
	etcd *clientv3.Client
}

// startFaulty starts a, talking to etcd through a proxy if proxied, and
// waits until it leads.
func startFaulty(t *testing.T, proxied bool) *faulty {
	f := &faulty{t: t, c: newCluster(t), logs: &recordLog{}}
	f.a = f.c.startLedgerWith("a", proxied, func(cfg *Config) { cfg.SessionTTL = faultTTL }, slog.New(f.logs))
	f.term = f.c.oneLeader(10 * time.Second).term
	client, err := etcdtest.NewClient(server.Endpoint)
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	f.etcd = client
	return f
}

// run returns job's entry for instant with outcome o under a's term.
func (f *faulty) run(job string, instant time.Time, o jobs.Outcome) jobs.LedgerEntry {
	return entry(job, instant, o, f.term)
}

// read returns job's entry as etcd holds it: the zero entry if absent.
func (f *faulty) read(job string) (jobs.LedgerEntry, error) {
	key := f.a.ledger.Key(job)
	resp, err := f.etcd.Get(context.Background(), key)
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

// waitStored waits until etcd holds want as job's entry.
func (f *faulty) waitStored(job string, want jobs.LedgerEntry, what string) {
	f.t.Helper()
	require.EventuallyWithT(f.t, func(c *assert.CollectT) {
		got, err := f.read(job)
		assert.NoError(c, err)
		assert.Equal(c, want, got, "etcd's entry of %s", job)
	}, 10*time.Second, 10*time.Millisecond, "%s; log:\n%s", what, f.logs)
}

// waitLogged waits until a's Ledger logged msg at level naming job's key.
func (f *faulty) waitLogged(level slog.Level, msg, job string) {
	f.t.Helper()
	key := f.a.ledger.Key(job)
	require.Eventually(f.t, func() bool {
		for _, r := range f.logs.messages(level, msg) {
			if attr(r, "key") == key {
				return true
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "no %s %q naming %s; log:\n%s", level, msg, key, f.logs)
}

// TestLedgerCarriesOnAfterLostAnswers: etcd applies a run's entry but its
// answer comes after the leader gave up waiting, and the next write's
// answer is lost too (etcd refused that one: its guard named the revision
// before). The leader must not take its own write for another writer's:
// the job's outcome is written and its next run starts.
func TestLedgerCarriesOnAfterLostAnswers(t *testing.T) {
	f := startFaulty(t, true)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	at := func(minute int, o jobs.Outcome) jobs.LedgerEntry {
		return f.run("backup", now.Add(time.Duration(minute)*time.Minute), o)
	}
	require.NoError(t, f.a.ledger.Commit(ctx, "backup", at(0, jobs.OutcomeRunning)))

	f.a.proxy.DelayAnswers(time.Second)
	for minute := 1; minute <= 2; minute++ {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := f.a.ledger.Commit(cctx, "backup", at(minute, jobs.OutcomeRunning))
		cancel()
		require.Error(t, err, "the answer came in time")
	}
	f.waitStored("backup", at(1, jobs.OutcomeRunning), "the first write whose answer was lost")
	f.a.proxy.AnswersOnTime()

	// The runner records the refused start as cancelled; Sync writes it.
	f.a.runner.set(at(1, jobs.OutcomeCancelled))
	f.a.ledger.Sync()
	f.waitStored("backup", at(1, jobs.OutcomeCancelled), "the outcome after the lost answers")

	require.NoError(t, f.a.ledger.Commit(ctx, "backup", at(3, jobs.OutcomeRunning)), "log:\n%s", f.logs)
	got, err := f.read("backup")
	require.NoError(t, err)
	assert.Equal(t, at(3, jobs.OutcomeRunning), got)
	f.c.checkExclusive()
	assert.Len(t, f.c.snapshot(), 1, "one leadership throughout")
}

// TestLedgerSyncWritesEveryJobPastOnesTrouble: one job's entry cannot be
// written (another writer changed its key); the other jobs' outcomes are
// written all the same, and the trouble is logged at ERROR naming the key.
func TestLedgerSyncWritesEveryJobPastOnesTrouble(t *testing.T) {
	f := startFaulty(t, false)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	stuck := f.run("stuck", now.Add(time.Minute), jobs.OutcomeRunning)
	other := f.run("other", now, jobs.OutcomeRunning)
	require.NoError(t, f.a.ledger.Commit(ctx, "stuck", stuck))
	require.NoError(t, f.a.ledger.Commit(ctx, "other", other))
	foreign := encodeEntry(entry("stuck", now.Add(time.Hour), jobs.OutcomeOK, 1))
	_, err := f.etcd.Put(ctx, f.a.ledger.Key("stuck"), string(foreign))
	require.NoError(t, err)

	// stuck's entry is the newer: the encoding lists it first.
	stuck.Outcome, other.Outcome = jobs.OutcomeOK, jobs.OutcomeOK
	f.a.runner.set(stuck, other)
	f.a.ledger.Sync()
	f.waitStored("other", other, "other's outcome")
	f.waitLogged(slog.LevelError, "etcd: ledger entry not synced: another writer changed it", "stuck")
}

// TestLedgerSyncRetriesAFailedWrite: etcd refuses a finished run's outcome
// (its database is full) and nothing in the ledger changes after; once etcd
// takes writes again, the outcome is written without another Sync.
func TestLedgerSyncRetriesAFailedWrite(t *testing.T) {
	f := startFaulty(t, false)
	run := f.run("backup", time.Now().Truncate(time.Second), jobs.OutcomeRunning)
	require.NoError(t, f.a.ledger.Commit(context.Background(), "backup", run))

	require.NoError(t, server.RefuseWrites())
	t.Cleanup(func() { require.NoError(t, server.AcceptWrites()) })
	done := run
	done.Outcome = jobs.OutcomeOK
	f.a.runner.set(done)
	f.a.ledger.Sync()
	f.waitLogged(slog.LevelWarn, "etcd: ledger entry not synced; trying again", "backup")
	require.NoError(t, server.AcceptWrites())

	f.waitStored("backup", done, "the outcome once etcd takes writes again")
	assert.Len(t, f.c.snapshot(), 1, "one leadership throughout")
}

// TestLedgerLogsAnOutcomeItCannotWrite: an outcome known after this node
// stopped leading cannot be written; that is logged at WARN, naming the
// key, since the next leader will find the run still running.
func TestLedgerLogsAnOutcomeItCannotWrite(t *testing.T) {
	f := startFaulty(t, false)
	run := f.run("backup", time.Now().Truncate(time.Second), jobs.OutcomeRunning)
	require.NoError(t, f.a.ledger.Commit(context.Background(), "backup", run))
	f.a.stop()

	done := run
	done.Outcome = jobs.OutcomeOK
	f.a.runner.set(done)
	f.a.ledger.Sync()
	f.waitLogged(slog.LevelWarn, "etcd: ledger entry not written: this node no longer leads its term", "backup")
	got, err := f.read("backup")
	require.NoError(t, err)
	assert.Equal(t, run, got, "etcd keeps what the leader wrote")
}

// attr returns the string value of r's attribute key.
func attr(r slog.Record, key string) string {
	var v string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}
