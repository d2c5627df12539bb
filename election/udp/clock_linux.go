package udp

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// throughSuspend returns CLOCK_BOOTTIME, which (unlike the monotonic clock
// Go uses) keeps counting while the system is suspended; the wall clock if
// the kernel does not offer it.
func throughSuspend() func() time.Duration {
	var ts unix.Timespec
	if bootTime(&ts) != nil {
		return wallElapsed
	}
	return func() time.Duration {
		var ts unix.Timespec
		// It worked once; should it ever fail, a zero reading only looks
		// like the monotonic clock running ahead, which counts nothing.
		_ = bootTime(&ts)
		return time.Duration(ts.Nano())
	}
}

// bootTime reads CLOCK_BOOTTIME with a raw system call: it never blocks,
// and unlike unix.ClockGettime it does not tell the Go scheduler it enters
// one, which would wake the runtime's monitor thread (sysmon) from its deep
// sleep on every reading of an idle node.
func bootTime(ts *unix.Timespec) error {
	_, _, errno := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_BOOTTIME, uintptr(unsafe.Pointer(ts)), 0)
	if errno != 0 {
		return errno
	}
	return nil
}
