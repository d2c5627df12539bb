//go:build !linux

package udp

// newLoopTimer returns the portable run loop timer, whose C the run loop
// selects on; fire is not used (timerfd_linux.go has Linux's).
func newLoopTimer(fire func()) loopTimer { return newWakeTimer() }
