package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// TestPromiseMissesFollowsTheLoss pins the arithmetic of the adaptive
// promise (quorum_promise.go): the smallest k whose lease, 4/5 of k
// intervals, leaves ⌈4k/5⌉ − 1 heartbeat round trips that are all lost
// with probability at most the target.
func TestPromiseMissesFollowsTheLoss(t *testing.T) {
	assert.Equal(t, []int{1, 2, 3, 3, 4, 5, 6, 7, 7}, []int{chances(2), chances(3), chances(4), chances(5),
		chances(6), chances(7), chances(8), chances(9), chances(10)})
	for _, tc := range []struct {
		loss       float64
		minK, maxK int
		want       int
	}{
		{0, 3, 10, 3},      // a clean link: the shortest promise
		{0.0005, 3, 10, 3}, // q ≈ 0.001: 2 chances give 1e-6
		{0.001, 3, 10, 4},  // one loss in a thousand: 3 chances
		{0.01, 3, 10, 6},   // q ≈ 0.02: 4 chances
		{0.05, 3, 10, 8},   // q ≈ 0.0975: 6 chances
		{0.20, 3, 10, 10},  // q = 0.36 needs 14 chances: capped
		{1, 3, 10, 10},
		{0.20, 3, 3, 3},    // MaxMisses = Misses: a fixed promise
		{0.05, 10, 10, 10}, // PromiseMisses 10: fixed too
		{0.01, 5, 10, 6},
	} {
		assert.Equal(t, tc.want, promiseMisses(tc.loss, tc.minK, tc.maxK, 1e-6), "loss %v in [%d, %d]", tc.loss, tc.minK, tc.maxK)
	}
}

// adaptiveFollower is a follower of a 3-node quorum cluster with the
// default adaptive promise, past its start-up promise, that has acked
// leader l's first heartbeat; it returns the node and the time.
func adaptiveFollower(t *testing.T) (*Node, time.Time) {
	t.Helper()
	c := testConfig("v", 100, 1)
	c.ClusterSize = 3
	v, err := NewNode(c, t0)
	require.NoError(t, err)
	v.Ready()
	now := t0.Add(v.t.MaxPromise)
	v.Step(now, beat("l", 1, 1, 1))
	require.Len(t, sentOf(v, Ack), 1)
	return v, now
}

// feed has v hear l's heartbeats up to beat `to`, every interval from now,
// the beats in lost missing; it returns the time and the promise of the
// last ACK.
func feed(t *testing.T, v *Node, now time.Time, from, to uint64, lost func(uint64) bool) (time.Time, time.Duration) {
	t.Helper()
	var promise time.Duration
	for b := from; b <= to; b++ {
		now = now.Add(v.t.Interval)
		if lost(b) {
			continue
		}
		v.Step(now, beat("l", 1, b, 1))
		as := sentOf(v, Ack)
		require.Len(t, as, 1, "beat %d", b)
		promise = as[0].Msg.Promise
	}
	return now, promise
}

// TestPromiseRisesWithLossAndFallsWithAMargin: a voter whose leader's
// heartbeats are lost promises more in its ACKs — at once — and, when the
// loss is over, less again, but only once its estimate is well below what
// asked for the longer promise, so an estimate at a boundary does not
// flip it at every heartbeat.
func TestPromiseRisesWithLossAndFallsWithAMargin(t *testing.T) {
	v, now := adaptiveFollower(t)
	every := func(k uint64) func(uint64) bool { return func(b uint64) bool { return b%k == 0 } }
	now, p := feed(t, v, now, 2, 100, func(uint64) bool { return false })
	assert.Equal(t, v.t.Promise, p, "no loss: the shortest promise")

	st0, _ := v.DurableVersion()
	now, p = feed(t, v, now, 101, 1100, every(20)) // 5 % loss
	assert.Equal(t, 8*v.t.Interval, p, "5 %% loss (estimate %.3f)", v.det.Loss())
	st1, _ := v.DurableVersion()
	assert.NotEqual(t, st0, st1, "the longer promise is saved")
	assert.Equal(t, p, v.Durable().Grant.Promise)

	// Loss ends: the estimate decays, the promise steps down behind it.
	var fell []time.Duration
	last := p
	for b := uint64(1101); b <= 6100; b += 100 {
		now, p = feed(t, v, now, b, b+99, func(uint64) bool { return false })
		if p != last {
			fell = append(fell, p)
			down := promiseMisses(v.det.Loss(), 3, 10, v.cfg.LossTarget)
			assert.Less(t, p, last, "only down while the loss decays")
			assert.LessOrEqual(t, int(p/v.t.Interval), down+1, "behind the estimate by at most a step")
			last = p
		}
	}
	assert.Equal(t, v.t.Promise, p, "back to the shortest")
	assert.NotEmpty(t, fell)

	// 5 % asks for 8 intervals; 3 % for 7, but 3 % / 0.75 still for 8:
	// an estimate a little below the boundary keeps the promise.
	now, p = feed(t, v, now, 6101, 10100, every(20))
	require.Equal(t, 8*v.t.Interval, p)
	_, p = feed(t, v, now, 10101, 20100, every(33))
	require.Equal(t, 7, promiseMisses(v.det.Loss(), 3, 10, v.cfg.LossTarget), "estimate %.4f", v.det.Loss())
	assert.Equal(t, 8*v.t.Interval, p, "within the margin: unchanged")
}

// TestHoldCoversTheLongestGrantInForce is the state file's rule under an
// adaptive promise: the promise saved with the binding (Grant.Promise,
// kept by a restart) is at any time at least what is left of the grants
// in force. It rises with the grant that needs it — the binding changes,
// so the adapter saves it before that grant leaves — and falls only when
// the longer grant has run out, whatever shorter grants came since.
func TestHoldCoversTheLongestGrantInForce(t *testing.T) {
	c := testConfig("v", 100, 1)
	c.ClusterSize = 3
	tm := c.Timings()
	q := newQuorumTracker(tm, 3, t0, Grant{Term: 7, To: "l", Promise: tm.Promise})
	now := t0.Add(tm.Promise)
	saved := q.binding()
	check := func(msg string) {
		t.Helper()
		left := q.grantedUntil().Sub(now)
		assert.GreaterOrEqual(t, q.binding().Promise, left, "%s: a restart keeps what is left", msg)
		if q.binding() != saved {
			saved = q.binding() // the adapter saves it before the grant leaves
		}
	}
	q.grant(now, 7, "l")
	check("equal promise")
	assert.Equal(t, tm.Promise, q.binding().Promise)

	q.promise = tm.MaxPromise // the loss rose, for 3 s
	q.grant(now, 7, "l")
	check("longer promise")
	assert.Equal(t, tm.MaxPromise, q.binding().Promise, "rises with the grant")
	for range 15 {
		now = now.Add(tm.Interval)
		q.grant(now, 7, "l")
		check("longer promise, renewed")
	}
	longEnds := now.Add(tm.MaxPromise)

	q.promise = tm.Promise // the loss fell
	before := saved
	for now.Before(longEnds) {
		now = now.Add(tm.Interval)
		q.grant(now, 7, "l")
		check("shorter promise, the longer grant in force")
		if now.Before(longEnds) {
			assert.Equal(t, before, q.binding(), "no change, no save, while the longer grant is in force")
		}
	}
	now = now.Add(tm.Interval)
	q.grant(now, 7, "l")
	check("after")
	assert.Equal(t, tm.Promise, q.binding().Promise, "falls once the longer grant ran out")
}

// TestStartUpWithoutStateHoldsTheLongestPromise: a node with nothing saved
// cannot know what its previous life promised — up to its longest
// promise, on a lossy link — so it votes for nobody that long.
func TestStartUpWithoutStateHoldsTheLongestPromise(t *testing.T) {
	c := testConfig("v", 100, 1)
	c.ClusterSize = 3
	v, err := NewNode(c, t0)
	require.NoError(t, err)
	v.Ready()
	require.Equal(t, 2*time.Second, v.t.MaxPromise)
	v.Step(t0.Add(v.t.MaxPromise-time.Millisecond), claim("m", 100, 1, 1))
	assert.Empty(t, sentOf(v, Vote), "within the longest promise")
	v.Step(t0.Add(v.t.MaxPromise), claim("m", 100, 2, 2))
	assert.Len(t, sentOf(v, Vote), 1)

	c.MaxMisses = c.Misses // a fixed promise: its start-up promise is that
	f, err := NewNode(c, t0)
	require.NoError(t, err)
	f.Ready()
	f.Step(t0.Add(f.t.Promise), claim("m", 100, 1, 1))
	assert.Len(t, sentOf(f, Vote), 1)
}

// TestDifferingTimingIsWhatOurConfigNeverPromises: under an adaptive
// promise, a peer that measured more loss promises more than we do now;
// that is no timing difference. A promise our config could never make —
// below our shortest, above our longest, or not a whole number of our
// intervals — is.
func TestDifferingTimingIsWhatOurConfigNeverPromises(t *testing.T) {
	ms := time.Millisecond
	a, _ := leaderWithVotes(t, 7, 3, granted{"b", 800 * ms}, granted{"c", 2000 * ms}, granted{"d", 300 * ms},
		granted{"e", 3000 * ms}, granted{"f", 900 * ms}, granted{"g", 600 * ms})
	q := a.Quorum()
	assert.Equal(t, []time.Duration{600 * ms, 600 * ms, 2000 * ms}, []time.Duration{q.Promise, q.MinPromise, q.MaxPromise})
	assert.Equal(t, []PeerPromise{{"d", 300 * ms}, {"e", 3000 * ms}, {"f", 900 * ms}}, q.Differing)
}

// TestColdQuorumStartHearsItself: three quorum nodes start cold (no state
// file: each keeps its longest promise, 2 s, as long as the isolation
// threshold) and their start-up queries are lost (the others were not
// listening yet). A node whose claim its promise holds back asks who
// leads meanwhile, so the nodes hear one another: no claim says it is
// isolated (which would get it no vote) and the first claims elect.
func TestColdQuorumStartHearsItself(t *testing.T) {
	nodes := map[string]*Node{}
	for i, id := range []string{"a", "b", "c"} {
		c := testConfig(id, 100, uint64(i+1))
		c.ClusterSize = 3
		n, err := NewNode(c, t0)
		require.NoError(t, err)
		n.Ready() // the start-up query, lost
		nodes[id] = n
	}
	now := t0
	for now.Before(t0.Add(5 * time.Second)) {
		now = now.Add(time.Millisecond)
		for _, n := range nodes {
			if !n.NextTick().After(now) {
				n.Tick(now)
			}
		}
		for moved := true; moved; {
			moved = false
			for id, n := range nodes {
				for _, e := range n.Ready() {
					moved = true
					if e.Msg.Type == Claim {
						assert.Zero(t, e.Msg.Flags&FlagIsolated, "%s claims isolated at %v", id, now.Sub(t0))
					}
					for to, r := range nodes {
						if to != id && (e.To == "" || e.To == to) {
							r.Step(now, e.Msg)
						}
					}
				}
			}
		}
	}
	var leaders []string
	for id, n := range nodes {
		if n.Status().Role == election.Leader {
			leaders = append(leaders, id)
		}
	}
	assert.Len(t, leaders, 1)
}
