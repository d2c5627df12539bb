//go:build !linux

package udp

// newLoopTimer returns the portable run loop timer (timerfd_linux.go has
// Linux's).
func newLoopTimer() loopTimer { return newWakeTimer() }
