package udptest

import (
	"sync"
	"time"
)

// JumpClock is a udp.Clock for tests of a real Elector inside a
// testing/synctest bubble: Go's (fake) time plus the jumps the test makes
// with Jump, as the Elector's suspend-counting clock sees a host that
// slept or a process that stalled while fake monotonic time stood still.
// Safe for concurrent use.
type JumpClock struct {
	mu   sync.Mutex
	skew time.Duration
}

// Now returns time.Now plus every jump so far.
func (c *JumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.skew)
}

// Jump moves the clock d ahead at once.
func (c *JumpClock) Jump(d time.Duration) {
	c.mu.Lock()
	c.skew += d
	c.mu.Unlock()
}
