package etcd

import (
	"time"

	"golang.org/x/sys/unix"
)

// systemClock is CLOCK_BOOTTIME: monotonic, and counting through suspend.
func systemClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return monotonic() // not expected on any kernel since 2.6.39
	}
	return time.Duration(ts.Nano())
}
