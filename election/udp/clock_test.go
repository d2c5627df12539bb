package udp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestSuspendClockCountsSuspend: the through-suspend clock runs on while
// the monotonic clock stands still; the difference is added to every later
// reading, small differences (rate noise) are not, and readings never go
// back.
func TestSuspendClockCountsSuspend(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mono, through time.Duration
	c := newSuspendClock(func() time.Time { return base.Add(mono) }, func() time.Duration { return 5*time.Hour + through })

	mono, through = time.Second, time.Second
	assert.Equal(t, base.Add(time.Second), c.Now())

	through += 10 * time.Second // host asleep 10 s: monotonic time did not move
	assert.Equal(t, base.Add(11*time.Second), c.Now(), "the suspend is counted")

	mono, through = mono+time.Second, through+time.Second+suspendSlack/2
	assert.Equal(t, base.Add(12*time.Second), c.Now(), "noise below the slack is not")

	through -= time.Hour // the through clock going back cannot move time back
	assert.Equal(t, base.Add(12*time.Second), c.Now())
}

// TestSystemClockFollowsTimeNow: with no suspend, the system clock reads
// as time.Now does.
func TestSystemClockFollowsTimeNow(t *testing.T) {
	c := SystemClock()
	a := time.Now()
	n := c.Now()
	b := time.Now()
	assert.False(t, n.Before(a.Add(-suspendSlack)))
	assert.False(t, n.After(b.Add(suspendSlack)))
}
