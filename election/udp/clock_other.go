//go:build !linux

package udp

import "time"

// throughSuspend returns the wall clock: it keeps running while the host is
// suspended, so its divergence from the monotonic clock is the suspend.
func throughSuspend() func() time.Duration { return wallElapsed }
