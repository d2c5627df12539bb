package etcd

import "time"

// clock reads elapsed time since an arbitrary origin. Lease deadlines are
// readings of it. Go's monotonic clock stops while the machine is
// suspended, but etcd's lease keeps running out meanwhile: on Linux the
// clock is CLOCK_BOOTTIME, which counts through suspend, so a leader that
// wakes up knows its lease may be gone.
type clock func() time.Duration

// processStart anchors the monotonic fallback clock.
var processStart = time.Now()

// monotonic is Go's monotonic clock; it does not count suspend.
func monotonic() time.Duration { return time.Since(processStart) }
