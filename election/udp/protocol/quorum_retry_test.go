package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// TestLeaseRetryBeforeItLapses: a leader whose acks stop coming heartbeats
// on schedule while its lease reaches past the heartbeat after next; once
// it does not, it heartbeats again every claim window, and the first of
// those a majority acks saves the lease and ends the retries.
func TestLeaseRetryBeforeItLapses(t *testing.T) {
	a, _ := quorumLeader(t, 3) // promise 600 ms, lease 480 ms after what b acked
	for range 5 {              // a clean link: every heartbeat acked at once
		a.Tick(a.NextTick())
		hb := sentOf(a, Heartbeat)
		require.Len(t, hb, 1)
		acks(a, hb[0].Msg, a.now, granted{"b", 600 * time.Millisecond})
	}
	require.Zero(t, a.Stats().LeaseRetries, "acked heartbeats need no retry")

	// The acks stop: the scheduled heartbeat goes out, unacked; the
	// lease (480 ms from the last acked one) would end before the
	// heartbeat after next, so a retry follows a claim window later, and
	// another, until one is acked.
	lastAcked := a.now
	a.Tick(a.NextTick())
	require.Len(t, sentOf(a, Heartbeat), 1)
	sched := a.now
	var retries []time.Time
	for range 4 {
		next := a.NextTick()
		require.True(t, next.Before(sched.Add(a.t.Interval)), "a retry before the next scheduled heartbeat")
		a.Tick(next)
		require.Len(t, sentOf(a, Heartbeat), 1)
		retries = append(retries, a.now)
	}
	assert.Equal(t, sched.Add(a.t.ClaimWindow), retries[0])
	assert.Equal(t, retries[0].Add(a.t.ClaimWindow), retries[1])
	assert.EqualValues(t, 4, a.Stats().LeaseRetries)
	a.Tick(a.NextTick())
	last := sentOf(a, Heartbeat)
	require.Len(t, last, 1)
	acks(a, last[0].Msg, a.now, granted{"b", 600 * time.Millisecond})
	assert.True(t, a.q.leaseEnd().After(lastAcked.Add(a.t.Lease)), "the retry renewed the lease")
	retriesNow := a.Stats().LeaseRetries
	assert.Equal(t, sched.Add(a.t.Interval), a.NextTick(), "renewed: back to the schedule")
	a.Tick(a.NextTick())
	assert.Equal(t, retriesNow, a.Stats().LeaseRetries)
	assert.Equal(t, election.Leader, a.Status().Role)
}

// TestNoLeaseRetryWhileHeartbeatsAreAnswered: with misses 2 the lease (4/5
// of two intervals) never reaches past the heartbeat after next, so it is
// always "at risk"; a leader whose every heartbeat is acked still sends
// one per interval and no more.
func TestNoLeaseRetryWhileHeartbeatsAreAnswered(t *testing.T) {
	c := testConfig("a", 100, 1)
	c.ClusterSize, c.Misses = 3, 2
	a, _ := leaderOf(t, c, granted{"b", 0})
	require.Less(t, a.t.Lease, 2*a.t.Interval)
	// The heartbeat sent on winning (leaderOf drained it): acked too.
	hb := []Envelope{{Msg: Message{Type: Heartbeat, Seq: a.seq, Term: a.Status().Leader.Term, Leader: "a"}}}
	start, beats := a.now, 0
	for range 1000 {
		for _, h := range hb {
			beats++
			acks(a, h.Msg, a.now, granted{"b", a.t.Promise})
		}
		if !a.NextTick().Before(start.Add(20 * a.t.Interval)) {
			break
		}
		a.Tick(a.NextTick())
		hb = sentOf(a, Heartbeat)
	}
	assert.Equal(t, election.Leader, a.Status().Role)
	assert.Equal(t, 20, beats, "one heartbeat per interval")
	assert.Zero(t, a.Stats().LeaseRetries)
}

// TestLeaseRetriesEndWithTheLease: a leader cut off from every voter
// retries once per claim window over the last stretch of its lease — a
// bounded number of extra heartbeats — and steps down when it ends.
func TestLeaseRetriesEndWithTheLease(t *testing.T) {
	a, sentAt := quorumLeader(t, 3)
	end := sentAt.Add(a.t.Lease)
	beats := 0
	for range 1000 {
		if a.Status().Role != election.Leader {
			break
		}
		a.Tick(a.NextTick())
		beats += len(sentOf(a, Heartbeat))
	}
	require.NotEqual(t, election.Leader, a.Status().Role, "steps down when the lease ends")
	assert.Equal(t, end, a.now, "no sooner, no later")
	// Scheduled heartbeats up to the lease's end, plus at most one retry
	// per claim window over the two intervals it was at risk.
	scheduled := int(a.t.Lease / a.t.Interval)
	assert.LessOrEqual(t, beats, scheduled+int(2*a.t.Interval/a.t.ClaimWindow))
	assert.Positive(t, a.Stats().LeaseRetries)
	assert.EqualValues(t, 1, a.Stats().LeaseLost)
}
