package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPausedFollowerRelistens: a follower whose process was paused longer
// than the suspicion timeout does not suspect its leader the moment it
// runs again: the leader's heartbeats may be queued behind the pause. It
// listens one more interval, and a heartbeat then keeps it following
// without any suspicion or claim.
func TestPausedFollowerRelistens(t *testing.T) {
	n := newTestNode(t)
	hb := beat("l", 1, 1, 1)
	hb.Beat = 1
	now := t0.Add(time.Millisecond)
	n.Step(now, hb)
	require.Equal(t, "l", n.Status().Leader.ID)
	n.Ready()

	resumed := now.Add(5 * time.Second) // paused (or suspended) for 5 s
	n.Tick(resumed)
	assert.Equal(t, uint64(1), n.Stats().Pauses)
	assert.Equal(t, "l", n.Status().Leader.ID, "still following right after the pause")
	assert.False(t, n.NextTick().Before(resumed.Add(n.t.Relisten)), "listens one interval before suspecting")

	hb.Seq, hb.Beat = 2, 2
	n.Step(resumed.Add(n.t.Interval/2), hb)
	assert.Equal(t, "l", n.Status().Leader.ID)
	assert.Zero(t, n.Stats().Suspicions, "a queued heartbeat after a pause is no reason to suspect")
	assert.Empty(t, sentOf(n, Claim))
}
