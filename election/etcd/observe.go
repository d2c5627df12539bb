package etcd

import (
	"context"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// observe sends the leader key of every leader el's election sees to out,
// in order, until ctx ends. Observe's channel closes when its watch is
// disrupted (etcd unreachable, the member lost its raft leader); it is then
// opened again after a pause.
func (e *Elector) observe(ctx context.Context, el *concurrency.Election, out chan<- *mvccpb.KeyValue) {
	pause := e.cfg.SessionTTL / 10
	for ctx.Err() == nil {
		for resp := range el.Observe(clientv3.WithRequireLeader(ctx)) {
			if len(resp.Kvs) == 0 {
				continue
			}
			select {
			case out <- resp.Kvs[0]:
			case <-ctx.Done():
				return
			}
		}
		sleep(ctx, pause)
	}
}

// watchGone returns a channel closed once lead's key is deleted (or
// replaced by another key of the same name), looking from revision rev on.
// A disrupted watch is re-checked with a read and opened again.
func (e *Elector) watchGone(ctx context.Context, lead *leadership, rev int64) <-chan struct{} {
	gone := make(chan struct{})
	go func() {
		pause := e.cfg.SessionTTL / 10
		for ctx.Err() == nil {
			wch := e.client.Watch(clientv3.WithRequireLeader(ctx), lead.key, clientv3.WithRev(rev+1))
			for wr := range wch {
				for _, ev := range wr.Events {
					if ev.Type == mvccpb.DELETE || uint64(ev.Kv.CreateRevision) != lead.term {
						close(gone)
						return
					}
				}
				if wr.Header.Revision > rev {
					rev = wr.Header.Revision
				}
			}
			if ctx.Err() != nil {
				return
			}
			// The watch broke (compaction, no raft leader, connection):
			// read the key to learn whether it is still ours.
			resp, err := e.client.Get(ctx, lead.key)
			switch {
			case err != nil:
				sleep(ctx, pause)
			case len(resp.Kvs) == 0 || uint64(resp.Kvs[0].CreateRevision) != lead.term:
				close(gone)
				return
			default:
				rev = resp.Header.Revision
			}
		}
	}()
	return gone
}

// sleep waits for d or ctx, whichever ends first.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
