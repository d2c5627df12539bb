package udp

import (
	"sync"
	"time"
)

// Clock is the protocol's time source. Its readings only need to be
// consistent with each other (the Node compares and subtracts them); they
// must keep counting while the host is suspended, which Go's monotonic
// clock does not: a node that slept through its lease would otherwise wake
// up believing no time had passed.
type Clock interface {
	Now() time.Time
}

// SystemClock returns the clock an Elector uses when Config.Clock is nil:
// time.Now plus the time the host spent suspended, measured on Linux with
// CLOCK_BOOTTIME and elsewhere by how far the wall clock ran ahead of the
// monotonic clock. After a suspend the Node sees the whole gap, so a
// resumed node is handled exactly like a paused one.
func SystemClock() Clock {
	return newSuspendClock(time.Now, throughSuspend())
}

// GoClock is Go's own clock, time.Now: it stops while the host is
// suspended. Use it only where time is faked (testing/synctest bubbles,
// in which real suspend-counting clocks run on while fake time stands
// still).
type GoClock struct{}

// Now returns time.Now().
func (GoClock) Now() time.Time { return time.Now() }

// suspendSlack is how much more the suspend-counting clock may run ahead
// of the monotonic clock before the difference counts as a suspend: above
// clock-rate noise and NTP slewing (at most 0.05 %), well under any pause
// threshold.
const suspendSlack = 20 * time.Millisecond

// suspendClock is now() plus slept, the total by which through() has run
// ahead of now()'s monotonic clock since the start.
type suspendClock struct {
	mu      sync.Mutex
	now     func() time.Time
	through func() time.Duration
	start   time.Time
	thr0    time.Duration
	slept   time.Duration
}

// newSuspendClock measures suspends as the excess of through (a clock that
// counts through suspend, any origin) over now's monotonic time.
func newSuspendClock(now func() time.Time, through func() time.Duration) *suspendClock {
	return &suspendClock{now: now, through: through, start: now(), thr0: through()}
}

// Now returns now() advanced by every suspend seen so far. Readings never
// go back: slept only grows.
func (c *suspendClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now()
	if gap := (c.through() - c.thr0) - t.Sub(c.start) - c.slept; gap > suspendSlack {
		c.slept += gap
	}
	return t.Add(c.slept)
}

// wallElapsed is the fallback through-suspend clock: the wall clock
// (stripped of its monotonic reading) since an arbitrary origin. A wall
// clock stepped forward also counts as a suspend: the node handles it as a
// pause of that length (a leader re-listens, or after misses × interval
// steps down).
func wallElapsed() time.Duration {
	return time.Duration(time.Now().Round(0).UnixNano())
}
