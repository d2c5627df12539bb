package heartbeat

import (
	"math/rand/v2"
	"time"
)

// Backoff draws how long a node that suspects its leader waits before it
// claims, VRRP skew-time style: higher priority waits less. Half of max is a
// priority skew (0 for priority 255, nearly max/2 for priority 0), the other
// half uniform jitter so that nodes of equal priority rarely claim together.
// The result lies in [0, max). r must not be nil.
func Backoff(r *rand.Rand, priority uint8, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	half := max / 2
	skew := time.Duration(int64(half) * int64(255-int(priority)) / 256)
	var jitter time.Duration
	if rest := max - half; rest > 0 {
		jitter = time.Duration(r.Int64N(int64(rest)))
	}
	return skew + jitter
}
