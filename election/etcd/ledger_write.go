package etcd

import (
	"bytes"
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// keyState is what a leadership knows of one ledger key in etcd.
//
// A write whose answer is lost (a timeout, a dropped connection) may have
// been applied, or may still be: the request can be on its way. Every write
// is guarded by rev, so of the writes made at rev at most one can ever
// apply, and none once the key is past rev. Their values stay in unsure
// until a write succeeds or etcd shows one of them applied: the next write
// reads the key in the same transaction when its guard fails, and a value
// in unsure there is this leader's own lost write, not another writer's.
type keyState struct {
	// rev is the key's ModRevision when this leadership last read or wrote
	// it (0: absent); val is its value then.
	rev int64
	val []byte
	// unsure are the values of writes guarded by rev whose answers were
	// lost.
	unsure [][]byte
}

// landed reports whether kv, the key as etcd holds it now, is one of the
// unsure writes, and if so takes it as the key's state.
func (s *keyState) landed(kv *mvccpb.KeyValue) bool {
	for _, v := range s.unsure {
		if bytes.Equal(kv.Value, v) {
			s.rev, s.val, s.unsure = kv.ModRevision, kv.Value, nil
			return true
		}
	}
	return false
}

// state returns key's state in this leadership. Must hold l.mu.
func (l *Ledger) state(key string) *keyState {
	s := l.keys[key]
	if s == nil {
		s = &keyState{}
		l.keys[key] = s
	}
	return s
}

// write puts v at key in a transaction guarded by the leader key of term
// and the key's last seen revision. When the guard fails because a write of
// this leader whose answer was lost has landed meanwhile, it takes that
// write as seen and, unless it was v, writes again over it. Must hold l.mu.
func (l *Ledger) write(ctx context.Context, term uint64, key string, v []byte) error {
	leaderKey, remaining, ok := l.el.leading(term)
	if !ok {
		return fmt.Errorf("%w (term %d)", ErrNotLeader, term)
	}
	if l.term != term {
		return fmt.Errorf("%w: ledger was not read for term %d", ErrNotLeader, term)
	}
	ctx, cancel := context.WithTimeout(ctx, remaining)
	defer cancel()
	s := l.state(key)
	resp, err := l.el.Client().Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(leaderKey), "=", int64(term)),
			clientv3.Compare(clientv3.ModRevision(key), "=", s.rev)).
		Then(clientv3.OpPut(key, string(v))).
		Else(clientv3.OpGet(leaderKey, clientv3.WithKeysOnly()), clientv3.OpGet(key)).
		Commit()
	if err != nil {
		s.unsure = append(s.unsure, v)
		return fmt.Errorf("etcd: ledger write %s (etcd may have applied it; the next write finds out): %w", key, err)
	}
	if resp.Succeeded {
		s.rev, s.val, s.unsure = resp.Header.Revision, v, nil
		return nil
	}
	if len(resp.Responses[0].GetResponseRange().Kvs) == 0 {
		return fmt.Errorf("%w: leader key %s is gone", ErrNotLeader, leaderKey)
	}
	kvs := resp.Responses[1].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return fmt.Errorf("%w: %s was deleted (this leader saw revision %d)", ErrLedgerChanged, key, s.rev)
	}
	if !s.landed(kvs[0]) {
		return fmt.Errorf("%w: %s is at revision %d, which this leader did not write (it saw revision %d)",
			ErrLedgerChanged, key, kvs[0].ModRevision, s.rev)
	}
	if bytes.Equal(s.val, v) {
		return nil
	}
	// unsure is empty now: this second write cannot come back here.
	return l.write(ctx, term, key, v)
}
