package etcd

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// leaseClock knows, by the local clock, until when a session's lease is
// certainly alive in etcd. etcd renews a lease when a keepalive reaches it,
// which is after the keepalive was sent, for the TTL the answer carries: so
// sendTime + TTL is never later than the real expiry. The margin keeps the
// leader's last action clear of that instant (clock rate, the time between
// checking and acting).
type leaseClock struct {
	now    clock
	margin time.Duration

	mu sync.Mutex
	// deadline is the clock reading after which the lease may be gone.
	deadline time.Duration
	// lost is set when etcd said the lease does not exist.
	lost bool
}

// renewed records that etcd answered a grant or keepalive sent at sentAt
// with ttl seconds.
func (l *leaseClock) renewed(sentAt time.Duration, ttl int64) {
	d := sentAt + time.Duration(ttl)*time.Second - l.margin
	l.mu.Lock()
	if d > l.deadline {
		l.deadline = d
	}
	l.mu.Unlock()
}

// markLost records that the lease is gone.
func (l *leaseClock) markLost() {
	l.mu.Lock()
	l.lost = true
	l.mu.Unlock()
}

// remaining returns how long the lease is certainly alive from now; zero or
// less means it may be gone.
func (l *leaseClock) remaining() time.Duration {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return 0
	}
	return l.deadline - now
}

// grant creates a lease of ttl and starts its clock.
func grant(ctx context.Context, c *clientv3.Client, ttl time.Duration, lc *leaseClock) (clientv3.LeaseID, error) {
	sent := lc.now()
	resp, err := c.Grant(ctx, int64(ttl/time.Second))
	if err != nil {
		return clientv3.NoLease, err
	}
	lc.renewed(sent, resp.TTL)
	return resp.ID, nil
}

// keepAlive renews the lease every TTL/3 with timed keepalives until ctx
// ends or etcd says the lease is gone (then it calls lost and returns).
// The concurrency.Session keeps the lease alive too, but its keepalives'
// send times are not visible, so they cannot move the deadline; these can.
// A renewal counts only if held, asked as the keepalive is sent, says the
// leader key this session holds, if any, is still there: a key deleted by
// hand (the lease living on) elects another node at once, and this node
// must not act past its last renewal from before the deletion plus the
// TTL (election.Succession's overhang). A failed keepalive or check is
// retried after retry, while the lease may still live.
func keepAlive(ctx context.Context, c *clientv3.Client, id clientv3.LeaseID, ttl time.Duration, lc *leaseClock,
	held func(context.Context) error, lost func(error)) {
	every, retry := ttl/3, ttl/10
	wait := every
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		sent := lc.now()
		cctx, cancel := context.WithTimeout(ctx, every)
		checked := make(chan error, 1)
		go func() { checked <- held(cctx) }() // both sent after sent
		resp, err := c.KeepAliveOnce(cctx, id)
		if herr := <-checked; err == nil {
			err = herr
		}
		cancel()
		switch {
		case err == nil:
			lc.renewed(sent, resp.TTL)
			wait = every
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			lc.markLost()
			lost(err)
			return
		case ctx.Err() != nil:
			return
		default:
			wait = retry
		}
	}
}
