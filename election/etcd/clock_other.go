//go:build !linux

package etcd

import "time"

// systemClock is Go's monotonic clock. It may not count suspend on every
// platform; see clock.
func systemClock() time.Duration { return monotonic() }
