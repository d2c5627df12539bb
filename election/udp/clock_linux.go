package udp

import (
	"time"

	"golang.org/x/sys/unix"
)

// throughSuspend returns CLOCK_BOOTTIME, which (unlike the monotonic clock
// Go uses) keeps counting while the system is suspended; the wall clock if
// the kernel does not offer it.
func throughSuspend() func() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return wallElapsed
	}
	return func() time.Duration {
		var ts unix.Timespec
		// It worked once; should it ever fail, a zero reading only looks
		// like the monotonic clock running ahead, which counts nothing.
		_ = unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
		return time.Duration(ts.Nano())
	}
}
