package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/lanleader/lanleader/election"
)

// maxLeaderWait bounds how long a leader sleeps between checks of its lease
// deadline: timers run on Go's monotonic clock, which stops during suspend,
// while the deadline is on a clock that does not.
const maxLeaderWait = 250 * time.Millisecond

// errSessionDone ends a session whose concurrency.Session reported Done.
var errSessionDone = errors.New("session done: its lease expired, was revoked, or is no longer kept alive")

// session runs one lease's life: grant, campaign, lead until the lease is
// in doubt or ctx is done, then clean up. It returns why it ended.
func (e *Elector) session(ctx context.Context, n *election.Notifier) (err error) {
	ttl := e.cfg.SessionTTL
	lc := &leaseClock{now: e.now, margin: e.cfg.Margin}
	gctx, cancel := context.WithTimeout(ctx, ttl)
	id, err := grant(gctx, e.client, ttl, lc)
	cancel()
	if err != nil {
		return fmt.Errorf("grant lease: %w", err)
	}
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s, err := concurrency.NewSession(e.client, concurrency.WithLease(id), concurrency.WithContext(sctx))
	if err != nil {
		e.revoke(id)
		return fmt.Errorf("session: %w", err)
	}
	log := e.log.With("lease", fmt.Sprintf("%x", id))
	log.Debug("etcd: session started", "ttl", ttl)

	held := func(ctx context.Context) error { return e.keyHeld(ctx, lc) }
	go keepAlive(sctx, e.client, id, ttl, lc, held, func(err error) { stop(fmt.Errorf("keepalive: %w", err)) })
	go func() {
		select {
		case <-s.Done():
			stop(errSessionDone)
		case <-sctx.Done():
		}
	}()
	el := concurrency.NewElection(s, e.electionPrefix())
	observed := make(chan *mvccpb.KeyValue)
	go e.observe(sctx, el, observed)
	won := make(chan error, 1)
	go func() { won <- el.Campaign(sctx, e.cfg.NodeID) }()

	var lead *leadership
	var gone <-chan struct{}
	defer func() {
		graceful := ctx.Err() != nil
		if lead != nil {
			e.stepDown(n, lead, err, graceful)
			if graceful {
				rctx, cancel := context.WithTimeout(context.Background(), ttl/2)
				if rerr := el.Resign(rctx); rerr != nil {
					log.Warn("etcd: resign failed; the leader key lapses with the lease", "err", rerr)
				}
				cancel()
			}
		}
		stop(err)
		s.Orphan()
		if lc.remaining() > 0 || graceful {
			e.revoke(id)
		}
	}()

	check := time.NewTimer(maxLeaderWait)
	defer check.Stop()
	for {
		var tick <-chan time.Time
		if lead != nil {
			check.Reset(min(lc.remaining(), maxLeaderWait))
			tick = check.C
		}
		select {
		case <-sctx.Done():
			return context.Cause(sctx)
		case err := <-won:
			won = nil
			if err != nil {
				if sctx.Err() != nil {
					return context.Cause(sctx)
				}
				return fmt.Errorf("campaign: %w", err)
			}
			lead, gone, err = e.takeLead(sctx, el, lc)
			if err != nil {
				return err
			}
			e.mu.Lock()
			e.lead = lead
			e.mu.Unlock()
			log.Info("etcd: this node leads", "term", lead.term, "key", lead.key)
			n.Update(e.status(n, election.Leader, election.LeaderInfo{ID: e.cfg.NodeID, Term: lead.term}))
		case kv := <-observed:
			rev := uint64(kv.CreateRevision)
			switch {
			case lead == nil:
				n.Update(e.status(n, election.Follower, election.LeaderInfo{ID: string(kv.Value), Term: rev}))
			case rev > lead.term:
				// A key created after ours leads: ours is gone.
				return fmt.Errorf("%w: %s leads under term %d", errLeaderKeyGone, kv.Value, rev)
			}
		case <-gone:
			return errLeaderKeyGone
		case <-tick:
			if lc.remaining() <= 0 {
				return errLeaseDeadline
			}
		}
	}
}

// takeLead checks, after Campaign returned, that this node's key really is
// the first one (Campaign does not notice that its own session expired
// while it waited), then runs BeforeLeading. It returns the leadership and
// a channel closed when the leader key is deleted.
func (e *Elector) takeLead(ctx context.Context, el *concurrency.Election, lc *leaseClock) (*leadership, <-chan struct{}, error) {
	resp, err := el.Leader(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errNotFirst, err)
	}
	kv := resp.Kvs[0]
	if string(kv.Key) != el.Key() || kv.CreateRevision != el.Rev() {
		return nil, nil, fmt.Errorf("%w: first key %s (revision %d), ours %s (revision %d)",
			errNotFirst, kv.Key, kv.CreateRevision, el.Key(), el.Rev())
	}
	lead := &leadership{key: el.Key(), term: uint64(el.Rev()), lease: lc}
	gone := e.watchGone(ctx, lead, resp.Header.Revision)
	e.mu.Lock()
	before := e.beforeLeading
	e.mu.Unlock()
	if before != nil {
		// Reading the ledger is of no use once the lease may be gone.
		bctx, cancel := context.WithTimeout(ctx, lc.remaining())
		err := before(bctx, lead.term)
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("before leading (term %d): %w", lead.term, err)
		}
	}
	if ctx.Err() != nil || lc.remaining() <= 0 {
		return nil, nil, fmt.Errorf("lease ended while taking over: %w", context.Cause(ctx))
	}
	return lead, gone, nil
}

// keyHeld returns nil unless this node leads on lease clock lc and its
// leader key is gone (errLeaderKeyGone) or cannot be read: the check a
// keepalive's renewal needs while leading (keepAlive).
func (e *Elector) keyHeld(ctx context.Context, lc *leaseClock) error {
	e.mu.Lock()
	l := e.lead
	e.mu.Unlock()
	if l == nil || l.lease != lc {
		return nil
	}
	resp, err := e.client.Get(ctx, l.key)
	switch {
	case err != nil:
		return err
	case len(resp.Kvs) == 0 || uint64(resp.Kvs[0].CreateRevision) != l.term:
		return errLeaderKeyGone
	}
	return nil
}

// stepDown ends a leadership: first this node stops acting
// (CanActAsLeader false, the leadership context cancelled), then whatever
// cleanup follows in etcd.
func (e *Elector) stepDown(n *election.Notifier, lead *leadership, why error, graceful bool) {
	e.mu.Lock()
	e.lead = nil
	e.mu.Unlock()
	if graceful {
		e.log.Info("etcd: stepping down", "term", lead.term)
	} else {
		e.log.Warn("etcd: leadership lost", "term", lead.term, "err", why)
	}
	n.Update(e.status(n, election.Follower, election.LeaderInfo{}))
}

// status is the status to report for role and leader.
func (e *Elector) status(n *election.Notifier, role election.Role, leader election.LeaderInfo) election.Status {
	prev := n.Status()
	s := election.Status{Node: e.cfg.NodeID, Role: role, Leader: leader, Term: max(prev.Term, leader.Term), Since: prev.Since}
	if role != prev.Role || s.Since.IsZero() {
		s.Since = time.Now()
	}
	return s
}

// revoke revokes a lease, best effort, so its keys go at once instead of
// after the TTL.
func (e *Elector) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.SessionTTL/2)
	defer cancel()
	if _, err := e.client.Revoke(ctx, id); err != nil {
		e.log.Debug("etcd: revoke failed; the lease lapses by its TTL", "lease", fmt.Sprintf("%x", id), "err", err)
	}
}

func (e *Elector) electionPrefix() string { return e.cfg.Prefix + "/election" }
