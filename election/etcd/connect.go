package etcd

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// connect reaches etcd before the first session: it dials (and logs in,
// with a Username) and reads the election's prefix once, each within the
// dial timeout, with a new client per attempt, so a connection stuck while
// etcd was unreachable is not carried over. It tries until it succeeds,
// ctx is done or etcd rejects the credentials, saying at WARN each time
// that etcd is unreachable and waiting SessionTTL/10 at first, doubling up
// to SessionTTL. It sets e.client on success; on ctx done it returns nil
// with e.client nil.
func (e *Elector) connect(ctx context.Context) error {
	retry := backoff{first: e.cfg.SessionTTL / 10, max: e.cfg.SessionTTL}
	for ctx.Err() == nil {
		c, err := dial(e.cfg, *e.dialCfg)
		if errors.Is(err, ErrCredentialsRejected) {
			return err
		}
		if err == nil {
			if err = e.probe(ctx, c); err == nil || !unreachable(err) {
				// Answered: whatever else is wrong (a role without
				// permission), the sessions say it.
				e.mu.Lock()
				e.client = c
				e.mu.Unlock()
				return nil
			}
			c.Close()
		}
		if ctx.Err() != nil {
			break
		}
		after := retry.next()
		e.log.Warn("etcd: unreachable; trying again", "endpoints", e.cfg.Endpoints, "err", err, "after", after)
		e.wait(ctx, after)
	}
	return nil
}

// probe reads the election's keys (their count) within the dial timeout: a
// linearizable read, so etcd must have a leader to answer.
func (e *Elector) probe(ctx context.Context, c *clientv3.Client) error {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.DialTimeout)
	defer cancel()
	_, err := c.Get(ctx, e.electionPrefix()+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	return err
}

// unreachable reports whether err says etcd did not answer in time (or
// had no leader to answer with), rather than answering no.
func unreachable(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, rpctypes.ErrNoLeader) ||
		errors.Is(err, rpctypes.ErrTimeout) || errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail) ||
		errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost)
}

// backoff is the wait before the next attempt to reach etcd: first, then
// doubling up to max.
type backoff struct {
	first, max time.Duration
	cur        time.Duration
}

// next returns the wait before the next attempt and doubles the one after.
func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.first
	}
	d := b.cur
	b.cur = min(2*b.cur, b.max)
	return d
}

// reset makes the next wait first again.
func (b *backoff) reset() { b.cur = 0 }
