package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Duration }

func (f *fakeClock) now() time.Duration { return f.t }

// TestLeaseClockDeadline: the lease is certain until the send time of the
// last answered keepalive + TTL - margin; an answer to an older keepalive
// does not move it back; a lost lease is over at once.
func TestLeaseClockDeadline(t *testing.T) {
	fc := &fakeClock{t: 100 * time.Second}
	lc := &leaseClock{now: fc.now, margin: time.Second}
	assert.LessOrEqual(t, lc.remaining(), time.Duration(0), "no grant yet")

	lc.renewed(100*time.Second, 10) // granted at 100 s for 10 s
	fc.t = 105 * time.Second
	assert.Equal(t, 4*time.Second, lc.remaining(), "100 + 10 - 1 - 105")
	fc.t = 109 * time.Second
	assert.LessOrEqual(t, lc.remaining(), time.Duration(0), "at the deadline the lease is in doubt")

	lc.renewed(108*time.Second, 10) // a keepalive sent at 108 s answered late
	assert.Equal(t, 8*time.Second, lc.remaining())
	lc.renewed(104*time.Second, 10) // an older one answered after it
	assert.Equal(t, 8*time.Second, lc.remaining(), "an older renewal must not shorten nor extend")

	lc.markLost()
	assert.LessOrEqual(t, lc.remaining(), time.Duration(0))
}

// TestCanActAsLeaderFollowsTheLocalDeadline: CanActAsLeader turns false
// when the lease's local deadline passes, by itself, before the elector's
// loop has noticed; and the ledger refuses to write then.
func TestCanActAsLeaderFollowsTheLocalDeadline(t *testing.T) {
	fc := &fakeClock{t: time.Minute}
	e := &Elector{now: fc.now}
	assert.False(t, e.CanActAsLeader(), "not leading")

	lc := &leaseClock{now: fc.now, margin: 200 * time.Millisecond}
	lc.renewed(time.Minute, 2)
	e.lead = &leadership{key: "/k", term: 7, lease: lc}
	assert.True(t, e.CanActAsLeader())
	_, _, ok := e.leading(7)
	assert.True(t, ok)
	_, _, ok = e.leading(6)
	assert.False(t, ok, "another term")

	fc.t += 1800 * time.Millisecond
	assert.False(t, e.CanActAsLeader(), "TTL - margin has passed")
	_, _, ok = e.leading(7)
	assert.False(t, ok)
}

// TestKeepAliveCountsFromSendTime: with answers 300 ms late, a renewal
// moves the deadline to at most its send time + TTL - margin, never to its
// arrival time + TTL - margin (etcd renewed the lease when the keepalive
// arrived there, up to 300 ms before the answer came back).
func TestKeepAliveCountsFromSendTime(t *testing.T) {
	const delay = 300 * time.Millisecond
	p, err := etcdtest.NewProxy(server.Endpoint)
	require.NoError(t, err)
	defer p.Close()
	client, err := etcdtest.NewClient(p.Endpoint)
	require.NoError(t, err)
	defer client.Close()
	p.DelayAnswers(delay)

	lc := &leaseClock{now: systemClock, margin: testTTL / 10}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	id, err := grant(ctx, client, testTTL, lc)
	require.NoError(t, err)
	deadline := func() time.Duration {
		lc.mu.Lock()
		defer lc.mu.Unlock()
		return lc.deadline
	}
	granted := deadline()
	done := make(chan struct{})
	go func() {
		defer close(done)
		keepAlive(ctx, client, id, testTTL, lc, func(context.Context) error { return nil }, func(error) {})
	}()
	var seen time.Duration
	require.Eventually(t, func() bool {
		seen = systemClock()
		return deadline() > granted
	}, 5*time.Second, 5*time.Millisecond, "no renewal")
	cancel()
	<-done
	assert.LessOrEqual(t, deadline(), seen-delay+testTTL-lc.margin,
		"deadline counted from the answer's arrival, not the keepalive's send time")
}

// TestKeepAliveStopsRenewingOnceTheLeaderKeyIsGone: a leader key deleted
// by hand (the lease lives on) elects another node at once; the old
// leader's renewals stop counting from then, so it acts at most TTL -
// margin past the deletion, however long its watch takes to tell it.
func TestKeepAliveStopsRenewingOnceTheLeaderKeyIsGone(t *testing.T) {
	client, err := etcdtest.NewClient(server.Endpoint)
	require.NoError(t, err)
	defer client.Close()
	lc := &leaseClock{now: systemClock, margin: testTTL / 10}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	id, err := grant(ctx, client, testTTL, lc)
	require.NoError(t, err)
	key := "/test/" + t.Name() + "/election/k"
	put, err := client.Put(ctx, key, "a", clientv3.WithLease(id))
	require.NoError(t, err)
	e := &Elector{client: client, lead: &leadership{key: key, term: uint64(put.Header.Revision), lease: lc}}
	deadline := func() time.Duration {
		lc.mu.Lock()
		defer lc.mu.Unlock()
		return lc.deadline
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		keepAlive(ctx, client, id, testTTL, lc, func(ctx context.Context) error { return e.keyHeld(ctx, lc) }, func(error) {})
	}()
	granted := deadline()
	require.Eventually(t, func() bool { return deadline() > granted }, 5*time.Second, 5*time.Millisecond,
		"renewed while the key is there")
	_, err = client.Delete(ctx, key)
	require.NoError(t, err)
	deleted := systemClock()
	time.Sleep(testTTL) // three keepalive rounds, all answered: the lease lives
	cancel()
	<-done
	assert.LessOrEqual(t, deadline(), deleted+testTTL-lc.margin, "renewed after the leader key was deleted")
	ttl, err := client.TimeToLive(context.Background(), id)
	require.NoError(t, err)
	assert.Positive(t, ttl.TTL, "the lease itself lived on")
}
