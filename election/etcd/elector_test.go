package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// TestElectsOneLeaderFencedByKeyRevision: of three nodes exactly one leads;
// its term is its leader key's creation revision, and the others name it.
func TestElectsOneLeaderFencedByKeyRevision(t *testing.T) {
	c := newCluster(t)
	nodes := map[string]*node{}
	for _, id := range []string{"a", "b", "c"} {
		nodes[id] = c.start(id)
	}
	lead := c.oneLeader(10 * time.Second)
	key, rev, _ := c.leaderKV(nodes["a"].client)
	assert.Equal(t, uint64(rev), lead.term, "term is the leader key's creation revision (%s)", key)

	for id, n := range nodes {
		waitStatus(t, n, func(s election.Status) bool {
			return s.Leader == election.LeaderInfo{ID: lead.node, Term: lead.term}
		})
		s := n.el.Status()
		assert.Equal(t, id == lead.node, s.IsLeader(), "%s role %s", id, s.Role)
		assert.Equal(t, id == lead.node, n.el.CanActAsLeader(), "%s CanActAsLeader", id)
		v := n.el.View()
		assert.Equal(t, c.prefix, v.Prefix)
		if id == lead.node {
			assert.Equal(t, key, v.LeaderKey)
			assert.True(t, v.CanAct)
			assert.InDelta(t, (testTTL - testTTL/10).Seconds(), v.LeaseRemainingSeconds, testTTL.Seconds()/2)
		} else {
			assert.Empty(t, v.LeaderKey)
			assert.False(t, v.CanAct)
		}
	}
	c.checkExclusive()
}

// TestGracefulStopResigns: a leader that stops resigns, so the next node
// takes over at once rather than after the TTL, and reports itself a
// follower that knows no leader.
func TestGracefulStopResigns(t *testing.T) {
	c := newCluster(t)
	a := c.start("a")
	c.oneLeader(10 * time.Second)
	c.start("b")
	stopped := systemClock()
	a.stop()
	next := c.oneLeader(10*time.Second, "a")
	assert.Equal(t, "b", next.node)
	t.Logf("b leads %v after a was told to stop", next.start-stopped)
	assert.Less(t, next.start-stopped, testTTL/2, "takeover waited for the lease instead of the resignation")
	s := a.el.Status()
	assert.Equal(t, election.Follower, s.Role)
	assert.False(t, a.el.CanActAsLeader())
	c.checkExclusive()
}

// TestFailoverWhenLeaderLeaseRevoked: revoking the leader's lease (an
// operator, or etcd losing it) ends its leadership, and another node leads
// under a higher term.
func TestFailoverWhenLeaderLeaseRevoked(t *testing.T) {
	c := newCluster(t)
	nodes := map[string]*node{"a": c.start("a"), "b": c.start("b")}
	first := c.oneLeader(10 * time.Second)
	_, _, lease := c.leaderKV(nodes["a"].client)
	revoked := systemClock()
	_, err := nodes["a"].client.Revoke(context.Background(), lease)
	require.NoError(t, err)

	ts := c.waitFor(10*time.Second, "a second leader", func(ts []tenure) bool { return len(ts) == 2 && ts[1].stop == 0 })
	t.Logf("the old leader stopped %v and the new one led %v after the revoke", ts[0].stop-revoked, ts[1].start-revoked)
	c.checkExclusive()
	// The revoked node campaigns again with a new session and follows.
	waitStatus(t, nodes[first.node], func(s election.Status) bool {
		return s.Role == election.Follower && s.Leader.Known() && s.Leader.ID != first.node
	})
}

// TestLeaderKeyDeletedStepsDown: deleting the leader key (etcdctl del) ends
// the leadership at once, although the lease lives on.
func TestLeaderKeyDeletedStepsDown(t *testing.T) {
	c := newCluster(t)
	a := c.start("a")
	c.oneLeader(10 * time.Second)
	key, _, _ := c.leaderKV(a.client)
	_, err := a.client.Delete(context.Background(), key)
	require.NoError(t, err)
	ts := c.waitFor(10*time.Second, "a stepped down and leading again", func(ts []tenure) bool {
		return len(ts) == 2 && ts[0].stop != 0 && ts[1].stop == 0
	})
	assert.Greater(t, ts[1].term, ts[0].term)
	c.checkExclusive()
}

// TestCampaignWonWithoutKeyIsRefused is the zombie case: a node whose own
// key vanished while it waited in line must not lead when the keys ahead
// of it go (Campaign returns nil then). Here b's key is deleted while a
// leads; when a stops, c leads, and b must not lead alongside.
func TestCampaignWonWithoutKeyIsRefused(t *testing.T) {
	c := newCluster(t)
	a := c.start("a")
	c.oneLeader(10 * time.Second)
	b := c.start("b")
	waitKeys(t, c, b, 2)
	bKey := lastKey(t, c, b)
	c.start("c")
	waitKeys(t, c, b, 3)
	_, err := b.client.Delete(context.Background(), bKey)
	require.NoError(t, err)

	a.stop()
	// b campaigns again (a new key) behind c rather than leading.
	c.waitFor(10*time.Second, "c leading", func(ts []tenure) bool {
		l := leading(ts)
		return len(l) > 0 && l[0].node == "c"
	})
	bLed := func(ts []tenure) bool {
		for _, l := range ts {
			if l.node == "b" {
				return true
			}
		}
		return false
	}
	require.Eventually(t, func() bool {
		return bLed(c.snapshot()) || len(keys(t, c, b)) == 2
	}, 10*time.Second, 10*time.Millisecond, "b neither led nor campaigned again")
	ts := c.snapshot()
	for _, l := range ts {
		assert.NotEqual(t, "b", l.node, "b led although its key was gone: %s", formatTenures(ts))
	}
	c.checkExclusive()
}

// TestCutOffLeaderStopsBeforeItsLeaseCanExpire: a leader that cannot reach
// etcd stops acting before its lease could expire in etcd (by its own
// clock: last keepalive sent before the cut + TTL - margin), and the other
// node takes over only after etcd expired the lease, so the two never act
// at once. With slow answers, the deadline must count from when a
// keepalive was sent, not answered.
func TestCutOffLeaderStopsBeforeItsLeaseCanExpire(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
	}{{"prompt answers", 0}, {"answers 300ms late", 300 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			testCutOff(t, tc.delay)
		})
	}
}

func testCutOff(t *testing.T, delay time.Duration) {
	c := newCluster(t)
	a := c.startProxied("a")
	c.oneLeader(10 * time.Second)
	c.start("b")
	waitKeys(t, c, a, 2)
	if delay > 0 {
		a.proxy.DelayAnswers(delay)
		// Wait until a renewed its lease through the slow link: a
		// keepalive sent after the delay began was answered.
		a.el.mu.Lock()
		lc := a.el.lead.lease
		a.el.mu.Unlock()
		since := systemClock()
		require.Eventually(t, func() bool {
			lc.mu.Lock()
			defer lc.mu.Unlock()
			return lc.deadline > since+testTTL-lc.margin
		}, 5*time.Second, 10*time.Millisecond, "no renewal through the slow link")
		require.Len(t, c.snapshot(), 1, "a lost its leadership on the slow link")
	}

	cut := systemClock()
	a.proxy.Cut()
	ts := c.waitFor(10*time.Second, "a stopped", func(ts []tenure) bool { return ts[0].stop != 0 })
	stoppedAfter := ts[0].stop - cut
	t.Logf("a stopped acting %v after the cut (TTL %v)", stoppedAfter, testTTL)
	margin := testTTL / 10
	// Every keepalive that renewed the lease was sent before the cut.
	assert.LessOrEqual(t, stoppedAfter, testTTL-margin+maxLeaderWait/2,
		"stopped %v after the cut; the lease may expire %v after it", stoppedAfter, testTTL)
	// Keepalives every TTL/3 (after the previous answer) keep it from
	// giving up at the first miss: the last answered one was sent at most
	// TTL/3 plus two delays before the cut.
	assert.Greater(t, stoppedAfter, testTTL-margin-testTTL/3-2*delay-50*time.Millisecond,
		"stepped down before its lease could have run out")
	assert.False(t, a.el.CanActAsLeader())

	// etcd expires the lease after the TTL (its lessor checks twice a
	// second); then b leads.
	ts = c.waitFor(testTTL+5*time.Second, "b leading", func(ts []tenure) bool { return len(ts) == 2 })
	assert.Equal(t, "b", ts[1].node)
	t.Logf("b leads %v after the cut", ts[1].start-cut)
	assert.Greater(t, ts[1].start, ts[0].stop, "b led while a could still act")
	c.checkExclusive()

	// Healed, a campaigns again and follows b.
	a.proxy.Heal()
	waitStatus(t, a, func(s election.Status) bool { return s.Leader.ID == "b" && s.Role == election.Follower })
}

// waitStatus waits until n's status satisfies cond.
func waitStatus(t *testing.T, n *node, cond func(election.Status) bool) {
	t.Helper()
	require.Eventually(t, func() bool { return cond(n.el.Status()) }, 10*time.Second, 10*time.Millisecond,
		"%s status %+v", n.id, n.el.Status())
}
