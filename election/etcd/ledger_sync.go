package etcd

import (
	"bytes"
	"context"
	"errors"

	"github.com/lanleader/lanleader/jobs"
)

// Sync writes the runner's ledger entries that differ from what etcd holds
// (outcomes of finished runs, a new leader's takeover marks; not entries of
// runs in progress, which Commit writes), in the background, under the current leadership. It never blocks: call it from
// jobs.RunnerConfig.OnLedgerChange. Writes that fail are logged; the next
// Sync tries again.
func (l *Ledger) Sync() {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.dirty = true
	if l.syncing {
		return
	}
	l.syncing = true
	go l.syncLoop()
}

func (l *Ledger) syncLoop() {
	for {
		l.syncMu.Lock()
		if !l.dirty {
			l.syncing = false
			l.syncMu.Unlock()
			return
		}
		l.dirty = false
		l.syncMu.Unlock()
		l.syncOnce()
	}
}

// syncOnce writes every entry of the runner's ledger that differs from the
// value last seen in etcd.
func (l *Ledger) syncOnce() {
	if l.cfg.Current == nil {
		return
	}
	cur, err := jobs.DecodeLedger(l.cfg.Current())
	if err != nil {
		l.log.Error("etcd: runner ledger does not decode", "err", err)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range cur.Entries {
		key, ok := l.names[e.JobID]
		if !ok || e.Outcome == jobs.OutcomeRunning {
			// A started run's entry is Commit's to write: before the
			// start, and only if the start goes ahead.
			continue
		}
		v := encodeEntry(e)
		if s := l.keys[key]; s != nil && len(s.unsure) == 0 && bytes.Equal(s.val, v) {
			continue
		}
		if err := l.write(context.Background(), l.term, key, v); err != nil {
			if !errors.Is(err, ErrNotLeader) {
				l.log.Warn("etcd: ledger entry not synced", "key", key, "err", err)
			}
			return
		}
	}
}
