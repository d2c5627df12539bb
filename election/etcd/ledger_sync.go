package etcd

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lanleader/lanleader/jobs"
)

// syncState runs Sync's passes one at a time, and the retries of writes
// that failed.
type syncState struct {
	mu sync.Mutex
	// running is set while a goroutine runs passes; dirty while another
	// pass is due.
	running, dirty bool
	// retry is the wait before the next retry pass; timer is the pending
	// one, nil if none.
	retry backoff
	timer *time.Timer
}

// Sync writes the runner's ledger entries that differ from what etcd holds
// (outcomes of finished runs, a new leader's takeover marks; not entries of
// runs in progress, which Commit writes), in the background, under the
// current leadership. It never blocks: call it from
// jobs.Cluster.Publish.
//
// Each entry is written on its own: one that cannot be written holds back
// no other. A write that failed for want of an answer (etcd unreachable,
// slow, or refusing writes) is tried again by a pass on a timer, after
// SessionTTL/10 and doubling up to SessionTTL, until it goes through or
// this node no longer leads. An entry another writer changed, or one this
// node can no longer write because its leadership ended, is logged and not
// tried again: the next leader reads what etcd holds.
func (l *Ledger) Sync() {
	s := &l.syncer
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirty = true
	if s.running {
		return
	}
	s.running = true
	go l.syncLoop()
}

// Flush writes what Sync would, in the caller's goroutine, and tries
// again after the retry delays until every entry is written, this node no
// longer leads, or ctx ends (ctx.Err() then). A leader that stops calls it
// once its runs have ended and before it resigns: the outcomes the stop
// produced (cancelled runs, finished ones, stopped services) are in etcd
// when the next leader reads the ledger, which would otherwise find them
// running, wait out their stop time and take them for interrupted.
func (l *Ledger) Flush(ctx context.Context) error {
	wait := backoff{first: l.syncer.retry.first, max: l.syncer.retry.max}
	for l.syncOnce() {
		t := time.NewTimer(wait.next())
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func (l *Ledger) syncLoop() {
	s := &l.syncer
	for {
		s.mu.Lock()
		if !s.dirty {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.dirty = false
		s.mu.Unlock()
		l.afterPass(l.syncOnce())
	}
}

// afterPass sets the retry timer after a pass that left a write to retry,
// unless one is pending; after a pass that wrote everything it could, the
// next retry waits the shortest time again.
func (l *Ledger) afterPass(retry bool) {
	s := &l.syncer
	s.mu.Lock()
	defer s.mu.Unlock()
	if !retry {
		s.retry.reset()
		return
	}
	if s.timer != nil {
		return
	}
	after := s.retry.next()
	l.log.Debug("etcd: ledger sync tries again", "after", after)
	s.timer = time.AfterFunc(after, func() {
		s.mu.Lock()
		s.timer = nil
		s.mu.Unlock()
		l.Sync()
	})
}

// syncOnce writes every entry of the runner's ledger that differs from what
// etcd holds. It reports whether a write failed in a way a retry may mend.
func (l *Ledger) syncOnce() (retry bool) {
	if l.cfg.Current == nil {
		return false
	}
	cur, err := jobs.DecodeLedger(l.cfg.Current())
	if err != nil {
		l.log.Error("etcd: runner ledger does not decode", "err", err)
		return false
	}
	for _, e := range cur.Entries {
		if e.Outcome == jobs.OutcomeRunning {
			// A started run's entry is Commit's to write: before the
			// start, and only if the start goes ahead.
			continue
		}
		if l.syncEntry(e) {
			retry = true
		}
	}
	return retry
}

// syncEntry writes e under the last leadership this node took over, unless
// etcd certainly holds it already, or its key is unknown (no takeover read
// it, no Commit wrote it). It reports whether the write failed in a way a
// retry may mend.
func (l *Ledger) syncEntry(e jobs.LedgerEntry) (retry bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key, known := l.names[e.JobID]
	if !known || l.term == 0 {
		return false
	}
	v := encodeEntry(e)
	if s := l.keys[key]; s != nil && len(s.unsure) == 0 && bytes.Equal(s.val, v) {
		return false
	}
	err := l.write(context.Background(), l.term, key, v)
	if err == nil {
		return false
	}
	log := l.log.With("key", key, "scheduled_at", e.Instant, "outcome", e.Outcome.String(), "run_term", e.Term, "err", err)
	switch {
	case errors.Is(err, ErrNotLeader):
		log.Warn("etcd: ledger entry not written: this node no longer leads its term", "term", l.term)
		return false
	case errors.Is(err, ErrLedgerChanged):
		log.Error("etcd: ledger entry not synced: another writer changed it")
		return false
	default:
		log.Warn("etcd: ledger entry not synced; trying again")
		return true
	}
}
