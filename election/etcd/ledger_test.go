package etcd

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/jobs"
)

// ledgerNode is a node with a Ledger whose adopted entries are recorded,
// and whose runner ledger (what Sync writes) the test sets.
type ledgerNode struct {
	*node
	ledger *Ledger
	runner runnerLedger

	mu      sync.Mutex
	adopted []jobs.LedgerEntry
	// adoptedAt is when the last takeover's entries were adopted.
	adoptedAt time.Duration
}

// runnerLedger stands for jobs.Runner.StateLedger.
type runnerLedger struct {
	mu sync.Mutex
	l  jobs.Ledger
}

func (r *runnerLedger) set(es ...jobs.LedgerEntry) {
	r.mu.Lock()
	r.l = jobs.Ledger{Entries: es}
	r.mu.Unlock()
}

func (r *runnerLedger) encode() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.l.Encode()
}

func (c *cluster) startLedger(id string) *ledgerNode {
	return c.startLedgerWith(id, false, nil, testLogger(c.t, id))
}

// startLedgerWith starts a ledger node named id, talking to etcd through a
// proxy if proxied; edit, if not nil, changes its elector's config; log
// receives the Ledger's log.
func (c *cluster) startLedgerWith(id string, proxied bool, edit func(*Config), log *slog.Logger) *ledgerNode {
	ln := &ledgerNode{}
	ln.node = c.startWith(id, proxied, edit, func(n *node) {
		ln.ledger = NewLedger(n.el, LedgerConfig{
			Adopt: func(b []byte) error {
				l, err := jobs.DecodeLedger(b)
				if err != nil {
					return err
				}
				ln.mu.Lock()
				ln.adopted = append(ln.adopted, l.Entries...)
				ln.adoptedAt = systemClock()
				ln.mu.Unlock()
				return nil
			},
			Current: ln.runner.encode,
			Logger:  log,
		})
	})
	return ln
}

func (ln *ledgerNode) adoptedEntries() ([]jobs.LedgerEntry, time.Duration) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	return append([]jobs.LedgerEntry(nil), ln.adopted...), ln.adoptedAt
}

// stored reads job's entry from etcd.
func stored(t *testing.T, ln *ledgerNode, job string) (jobs.LedgerEntry, bool) {
	t.Helper()
	resp, err := ln.client.Get(context.Background(), ln.ledger.Key(job))
	require.NoError(t, err)
	if len(resp.Kvs) == 0 {
		return jobs.LedgerEntry{}, false
	}
	l, err := jobs.DecodeLedger(resp.Kvs[0].Value)
	require.NoError(t, err)
	require.Len(t, l.Entries, 1)
	return l.Entries[0], true
}

func entry(job string, instant time.Time, o jobs.Outcome, term uint64) jobs.LedgerEntry {
	return jobs.LedgerEntry{JobID: jobs.JobIDOf(job), Instant: instant.UTC(), Outcome: o, Term: term}
}

// TestLedgerOnlyTheLeaderRecordsAndTheNextReadsIt: the leader's Commit is
// in etcd when it returns; a follower's, or the old leader's after a
// failover, is refused; the new leader has read the entry before its
// leadership was reported.
func TestLedgerOnlyTheLeaderRecordsAndTheNextReadsIt(t *testing.T) {
	c := newCluster(t)
	a := c.startLedger("a")
	first := c.oneLeader(10 * time.Second)
	b := c.startLedger("b")
	waitKeys(t, c, b.node, 2)
	ctx := context.Background()
	instant := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)

	e := entry("backup", instant, jobs.OutcomeRunning, first.term)
	require.NoError(t, a.ledger.Commit(ctx, "backup", e))
	got, ok := stored(t, a, "backup")
	require.True(t, ok, "the entry is in etcd when Commit returns")
	assert.Equal(t, e, got)

	assert.ErrorIs(t, b.ledger.Commit(ctx, "backup", e), ErrNotLeader, "a follower must not record a run")

	a.stop()
	second := c.oneLeader(10*time.Second, "a")
	require.Equal(t, "b", second.node)
	adopted, at := b.adoptedEntries()
	assert.Equal(t, []jobs.LedgerEntry{e}, adopted, "the new leader read the old leader's entry")
	assert.Less(t, at, second.start, "read before the leadership was reported")

	late := entry("backup", instant.Add(time.Hour), jobs.OutcomeRunning, first.term)
	assert.ErrorIs(t, a.ledger.Commit(ctx, "backup", late), ErrNotLeader, "the old leader's term is over")
	next := entry("backup", instant.Add(time.Hour), jobs.OutcomeRunning, second.term)
	require.NoError(t, b.ledger.Commit(ctx, "backup", next))
	got, _ = stored(t, b, "backup")
	assert.Equal(t, next, got)
}

// TestLedgerWriteIsGuardedInEtcd: the transaction itself refuses a write
// when the leader key is gone, even if the node still believes it leads
// (its watch has not told it yet).
func TestLedgerWriteIsGuardedInEtcd(t *testing.T) {
	c := newCluster(t)
	a := c.startLedger("a")
	lead := c.oneLeader(10 * time.Second)
	key, _, _ := c.leaderKV(a.client)

	// Freeze a's view: a leadership that outlives its key.
	lc := &leaseClock{now: systemClock}
	lc.renewed(systemClock(), 60)
	believed := &leadership{key: key + "-deleted", term: lead.term, lease: lc}
	a.el.mu.Lock()
	real := a.el.lead
	a.el.lead = believed
	a.el.mu.Unlock()
	defer func() {
		a.el.mu.Lock()
		a.el.lead = real
		a.el.mu.Unlock()
	}()

	err := a.ledger.Commit(context.Background(), "backup", entry("backup", time.Now(), jobs.OutcomeRunning, lead.term))
	assert.ErrorIs(t, err, ErrNotLeader)
	_, ok := stored(t, a, "backup")
	assert.False(t, ok, "nothing written")
}

// TestLedgerRefusesWhenTheEntryChangedUnderIt: a leader writes only over the
// value it last saw; another writer under the prefix makes it refuse.
func TestLedgerRefusesWhenTheEntryChangedUnderIt(t *testing.T) {
	c := newCluster(t)
	a := c.startLedger("a")
	lead := c.oneLeader(10 * time.Second)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	require.NoError(t, a.ledger.Commit(ctx, "backup", entry("backup", now, jobs.OutcomeRunning, lead.term)))

	other := jobs.Ledger{Entries: []jobs.LedgerEntry{entry("backup", now.Add(time.Minute), jobs.OutcomeOK, 1)}}.Encode()
	_, err := a.client.Put(ctx, a.ledger.Key("backup"), string(other))
	require.NoError(t, err)
	err = a.ledger.Commit(ctx, "backup", entry("backup", now.Add(2*time.Minute), jobs.OutcomeRunning, lead.term))
	assert.ErrorIs(t, err, ErrLedgerChanged)
}

// TestLedgerTakeOverSkipsBadEntries: a value that does not decode, or
// decodes as another job's entry, is not adopted; the others are, and the
// leader can overwrite the bad one.
func TestLedgerTakeOverSkipsBadEntries(t *testing.T) {
	c := newCluster(t)
	cl, err := clientv3.New(clientv3.Config{Endpoints: []string{server.Endpoint}})
	require.NoError(t, err)
	defer cl.Close()
	ctx := context.Background()
	prefix := c.prefix + "/ledger/"
	good := entry("good", time.Unix(1700000000, 0), jobs.OutcomeOK, 3)
	for key, v := range map[string][]byte{
		"garbage": []byte("not a ledger"),
		"swapped": jobs.Ledger{Entries: []jobs.LedgerEntry{entry("other", time.Unix(1700000000, 0), jobs.OutcomeOK, 3)}}.Encode(),
		"good":    jobs.Ledger{Entries: []jobs.LedgerEntry{good}}.Encode(),
	} {
		_, err := cl.Put(ctx, prefix+key, string(v))
		require.NoError(t, err)
	}
	a := c.startLedger("a")
	lead := c.oneLeader(10 * time.Second)
	adopted, _ := a.adoptedEntries()
	assert.Equal(t, []jobs.LedgerEntry{good}, adopted)
	require.NoError(t, a.ledger.Commit(ctx, "garbage", entry("garbage", time.Now(), jobs.OutcomeRunning, lead.term)))
}

// TestLedgerSyncWritesOutcomes: Sync writes the runner's entries that differ
// from etcd (a finished run's outcome), of keys it knows only: an entry of a
// job no takeover read and no Commit wrote has no name to make a key of.
func TestLedgerSyncWritesOutcomes(t *testing.T) {
	c := newCluster(t)
	ln := c.startLedger("a")
	lead := c.oneLeader(10 * time.Second)
	now := time.Now().Truncate(time.Second)
	started := entry("backup", now, jobs.OutcomeRunning, lead.term)
	require.NoError(t, ln.ledger.Commit(context.Background(), "backup", started))

	done := started
	done.Outcome = jobs.OutcomeOK
	ln.runner.set(done, entry("unknown", now, jobs.OutcomeOK, lead.term))
	ln.ledger.Sync()
	require.Eventually(t, func() bool {
		got, _ := stored(t, ln, "backup")
		return got == done
	}, 5*time.Second, 10*time.Millisecond)
	_, ok := stored(t, ln, "unknown")
	assert.False(t, ok)

	// A run in progress is the start gate's to record, not Sync's.
	next := entry("backup", now.Add(time.Minute), jobs.OutcomeRunning, lead.term)
	ln.runner.set(next)
	ln.ledger.Sync()
	ln.ledger.Sync() // the second waits for the first to finish
	require.Eventually(t, func() bool {
		ln.ledger.syncer.mu.Lock()
		defer ln.ledger.syncer.mu.Unlock()
		return !ln.ledger.syncer.running
	}, 5*time.Second, time.Millisecond)
	got, _ := stored(t, ln, "backup")
	assert.Equal(t, done, got)
}

// TestLedgerSyncWritesWhatATakeoverRead: a new leader writes what it
// changed of a job it never started a run of (the run the old leader left
// running, concluded interrupted): the takeover's read taught it the key.
func TestLedgerSyncWritesWhatATakeoverRead(t *testing.T) {
	c := newCluster(t)
	a := c.startLedger("a")
	first := c.oneLeader(10 * time.Second)
	b := c.startLedger("b")
	waitKeys(t, c, b.node, 2)
	left := entry("backup", time.Now().Truncate(time.Second), jobs.OutcomeRunning, first.term)
	require.NoError(t, a.ledger.Commit(context.Background(), "backup", left))
	a.stop()
	c.oneLeader(10*time.Second, "a")

	concluded := left
	concluded.Outcome = jobs.OutcomeInterrupted
	b.runner.set(concluded)
	b.ledger.Sync()
	require.Eventually(t, func() bool {
		got, _ := stored(t, b, "backup")
		return got == concluded
	}, 5*time.Second, 10*time.Millisecond)
}

// TestLedgerManualRunsHaveTheirOwnKey: a manual run's entry (its own ledger
// id) goes under manual/, is read back at a takeover, and an entry of an
// id that is neither the job's nor its manual runs' is refused.
func TestLedgerManualRunsHaveTheirOwnKey(t *testing.T) {
	c := newCluster(t)
	a := c.startLedger("a")
	first := c.oneLeader(10 * time.Second)
	ctx := context.Background()
	manual := jobs.LedgerEntry{JobID: jobs.ManualJobIDOf("backup"), Instant: time.Unix(1700000000, 0).UTC(),
		Outcome: jobs.OutcomeRunning, Term: first.term}
	require.NoError(t, a.ledger.Commit(ctx, "backup", manual))
	resp, err := a.client.Get(ctx, c.prefix+"/manual/backup")
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	_, ok := stored(t, a, "backup")
	assert.False(t, ok, "the scheduled runs' entry is untouched")

	foreign := manual
	foreign.JobID = jobs.JobIDOf("other")
	assert.Error(t, a.ledger.Commit(ctx, "backup", foreign))

	b := c.startLedger("b")
	waitKeys(t, c, b.node, 2)
	a.stop()
	c.oneLeader(10*time.Second, "a")
	adopted, _ := b.adoptedEntries()
	assert.Equal(t, []jobs.LedgerEntry{manual}, adopted)
}
