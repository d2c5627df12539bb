//go:build !linux

package proc

import "time"

var bootEpoch = time.Now()

// BootNow is the time since this process started, on the monotonic clock:
// without Linux's CLOCK_BOOTTIME licences are not enforced by a shim, and
// only this process compares their deadlines.
func BootNow() time.Duration { return time.Since(bootEpoch) }
