package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/jobs"
)

// ErrNotLeader is returned by Ledger.Commit when this node does not hold
// the leadership the entry's term names, or its lease is in doubt.
var ErrNotLeader = errors.New("etcd: not the leader of this term")

// ErrLedgerChanged is returned by Ledger.Commit when another writer changed
// the job's ledger key since this leader read or wrote it: something else
// writes under this cluster's prefix.
var ErrLedgerChanged = errors.New("etcd: ledger entry changed under this leader")

// LedgerConfig configures a Ledger.
type LedgerConfig struct {
	// Adopt receives each entry read at a takeover, encoded as a
	// one-entry jobs.Ledger: jobs.Runner.AdoptLedger.
	Adopt func([]byte) error
	// Current returns the runner's own encoded ledger as it knows it
	// (jobs.Runner.StateLedger), read by Sync.
	Current func() []byte
	// Logger receives write failures; nil means slog.Default().
	Logger *slog.Logger
}

// Ledger keeps the job ledger in etcd, one key per job under the election's
// prefix (Prefix+"/ledger/"+job name; a job's manual runs, which have a
// ledger id of their own, under Prefix+"/manual/"+job name), each value a
// one-entry jobs.Ledger encoding. Only the current leader writes: every
// write is a transaction that holds only while this node's leader key
// exists with the term's revision, and while the job's key is still what
// this leader last read or wrote (or a write of its own whose answer was
// lost: keyState).
//
// Jobs are known by the keys the Ledger has seen: those a takeover read and
// those Commit wrote. A job added or renamed by a reload is known from its
// first run's Commit, a removed one still is when its last run ends; the
// Ledger keeps no job list of its own.
type Ledger struct {
	el  *Elector
	cfg LedgerConfig
	log *slog.Logger

	// mu serializes writes, so each key's state stays exact.
	mu sync.Mutex
	// term is the leadership TakeOver last read the ledger for.
	term uint64
	// names maps ledger ids (scheduled and manual runs) to their keys:
	// every key a takeover read or Commit wrote, in any leadership.
	names map[uint64]string
	// keys is what the leadership of term knows of each key in etcd.
	keys map[string]*keyState

	// syncer runs Sync's passes and their retries.
	syncer syncState
}

// NewLedger returns a Ledger in el's etcd and prefix, and hooks its
// TakeOver into el (SetBeforeLeading), so a new leader reads the ledger
// before it schedules anything.
func NewLedger(el *Elector, cfg LedgerConfig) *Ledger {
	l := &Ledger{el: el, cfg: cfg, log: cfg.Logger, names: map[uint64]string{}, keys: map[string]*keyState{}}
	if l.log == nil {
		l.log = slog.Default()
	}
	l.syncer.retry = backoff{first: el.cfg.SessionTTL / 10, max: el.cfg.SessionTTL}
	el.SetBeforeLeading(l.TakeOver)
	return l
}

// kinds are the two kinds of ledger entries of a job, each under its own
// directory of the prefix: scheduled runs and manual runs.
var kinds = []struct {
	dir string
	id  func(name string) uint64
}{
	{"/ledger/", jobs.JobIDOf},
	{"/manual/", jobs.ManualJobIDOf},
}

// Key returns the etcd key of job's ledger entry (scheduled runs).
func (l *Ledger) Key(job string) string { return l.el.Prefix() + kinds[0].dir + job }

// keyOf returns the key of job's entry with ledger id id.
func (l *Ledger) keyOf(job string, id uint64) (string, error) {
	for _, k := range kinds {
		if k.id(job) == id {
			return l.el.Prefix() + k.dir + job, nil
		}
	}
	return "", fmt.Errorf("etcd: ledger entry %016x is not of job %q (scheduled or manual runs)", id, job)
}

// TakeOver reads the whole ledger for a new leadership under term, in one
// snapshot, and hands every entry to Adopt. A value that does not decode,
// or names another job than its key, is logged and skipped: that job
// starts as if it had no history.
func (l *Ledger) TakeOver(ctx context.Context, term uint64) error {
	ops := make([]clientv3.Op, len(kinds))
	for i, k := range kinds {
		ops[i] = clientv3.OpGet(l.el.Prefix()+k.dir, clientv3.WithPrefix())
	}
	resp, err := l.el.Client().Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("read ledger under %s: %w", l.el.Prefix(), err)
	}
	keys := map[string]*keyState{}
	names := map[uint64]string{}
	for i, k := range kinds {
		for _, kv := range resp.Responses[i].GetResponseRange().Kvs {
			key := string(kv.Key)
			keys[key] = &keyState{rev: kv.ModRevision, val: kv.Value}
			name := strings.TrimPrefix(key, l.el.Prefix()+k.dir)
			names[k.id(name)] = key
			if err := checkValue(k.id(name), kv.Value); err != nil {
				l.log.Error("etcd: ignoring a ledger entry", "key", key, "err", err)
				continue
			}
			if l.cfg.Adopt != nil {
				if err := l.cfg.Adopt(kv.Value); err != nil {
					l.log.Error("etcd: ledger entry not adopted", "key", key, "err", err)
				}
			}
		}
	}
	l.mu.Lock()
	l.term, l.keys = term, keys
	maps.Copy(l.names, names)
	l.mu.Unlock()
	l.log.Info("etcd: ledger read", "term", term, "entries", len(keys), "revision", resp.Header.Revision)
	return nil
}

// checkValue reports whether v is a one-entry ledger of ledger id id.
func checkValue(id uint64, v []byte) error {
	d, err := jobs.DecodeLedger(v)
	if err != nil {
		return err
	}
	if len(d.Entries) != 1 || d.Entries[0].JobID != id {
		return fmt.Errorf("want one entry of ledger id %016x, found %d", id, len(d.Entries))
	}
	return nil
}

// Commit records e, job's entry (of its scheduled or its manual runs), in
// etcd before its run starts: nil means it is written and only then may the
// process start. It fails with ErrNotLeader if this node does not lead
// under e.Term with its lease certainly alive, or if the leader key is gone
// by the time etcd applies the write; with ErrLedgerChanged if another
// writer changed the job's key since this leader last saw it. It gives up
// when ctx ends or the lease's local deadline passes; etcd may then have
// applied the write all the same, which the job's next write finds out
// (keyState), so one lost answer never blocks the job's later runs.
func (l *Ledger) Commit(ctx context.Context, job string, e jobs.LedgerEntry) error {
	if e.JobID == 0 {
		e.JobID = jobs.JobIDOf(job)
	}
	key, err := l.keyOf(job, e.JobID)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names[e.JobID] = key // its outcome is Sync's to write, whatever the jobs are by then
	return l.write(ctx, e.Term, key, encodeEntry(e))
}

// encodeEntry encodes e as a ledger key's value: a one-entry jobs.Ledger.
func encodeEntry(e jobs.LedgerEntry) []byte {
	return jobs.Ledger{Entries: []jobs.LedgerEntry{e}}.Encode()
}
