package proc

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BootNow reads CLOCK_BOOTTIME: time since boot, suspends included, the
// same for every process of the host. Licence deadlines are on this clock.
func BootNow() time.Duration {
	var ts unix.Timespec
	// A raw system call: it never blocks, and the shim calls it from its
	// locked thread.
	_, _, errno := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_BOOTTIME, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		panic("proc: clock_gettime(CLOCK_BOOTTIME): " + errno.Error()) // present since Linux 2.6.39
	}
	return time.Duration(ts.Nano())
}
