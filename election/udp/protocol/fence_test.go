package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// Every heartbeat says the leader's fence: Interval + StallTolerance without
// quorum; nothing in quorum mode, where the lease fences.
func TestHeartbeatsSayTheFence(t *testing.T) {
	for _, size := range []int{0, 1} {
		c := testConfig("l", 100, 1)
		c.ClusterSize = size
		l, err := NewNode(c, t0)
		require.NoError(t, err)
		var beats []Message
		for now := t0; now.Before(t0.Add(5 * time.Second)); now = l.NextTick() {
			l.Tick(now)
			for _, e := range l.Ready() {
				if e.Msg.Type == Heartbeat {
					beats = append(beats, e.Msg)
				}
			}
		}
		require.NotEmpty(t, beats, "cluster size %d", size)
		want := c.Interval + c.Interval/2
		if size > 0 {
			want = 0
		}
		for _, m := range beats {
			assert.Equal(t, want, m.Fence, "cluster size %d", size)
		}
	}
}

// A follower configured faster than its leader (a shorter interval, fewer
// misses: a safety input that lives in local config) gives the leader up
// no sooner than the fence its heartbeats say: the leader may act until
// then. Its own timing would suspect after 2 × 50 ms.
func TestFollowerWaitsOutTheLeadersFence(t *testing.T) {
	c := testConfig("f", 100, 2)
	c.Interval, c.Misses, c.MaxMisses, c.PauseThreshold = 50*time.Millisecond, 2, 2, 0
	f, err := NewNode(c, t0)
	require.NoError(t, err)
	f.Ready()
	fence := 200*time.Millisecond + MinStallTolerance // a leader's at 200 ms
	var last time.Time
	now := t0
	for seq := uint64(1); seq <= 3; seq++ {
		now = now.Add(200 * time.Millisecond)
		hb := beat("l", 7, seq, 1)
		hb.Fence, hb.Addr = fence, "addr-l"
		f.Step(now, hb)
		last = now
	}
	require.Equal(t, "l", f.Status().Leader.ID)
	for range 1000 {
		now = f.NextTick()
		if now.After(last.Add(fence + time.Second)) {
			break
		}
		f.Tick(now)
		if f.Status().Leader.ID != "l" {
			break
		}
	}
	assert.GreaterOrEqual(t, now.Sub(last), fence, "gave the leader up %v after its last heartbeat, before its fence", now.Sub(last))
	assert.NotEqual(t, "l", f.Status().Leader.ID, "and does give it up")
}

// A leader stalled past its fence cannot act even before it runs again
// (the job runner asks CanActAsLeader on waking): its heartbeat schedule
// says nothing of a stall shorter than PauseThreshold.
func TestLeaderStopsActingAtItsFence(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	require.True(t, l.CanActAsLeader(now))
	assert.True(t, l.CanActAsLeader(now.Add(l.t.Fence-time.Nanosecond)))
	assert.False(t, l.CanActAsLeader(now.Add(l.t.Fence)), "past the fence")
	assert.Equal(t, election.Leader, l.Status().Role, "the role changes when it runs again")
}
