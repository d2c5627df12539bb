package udp

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fdTimer is the run loop's timer on Linux: a timerfd in Go's netpoller
// instead of a runtime timer. An idle node's run loop wakes for nothing
// else, and a runtime timer costs more wake-ups than its one expiry: the
// netpoller sleeps in whole milliseconds rounded down, so it wakes about a
// millisecond early and once more for the rest, and the runtime's monitor
// thread (sysmon) sleeps until the next runtime timer's time and wakes for
// it too — and for the stale time of a timer since moved later, such as a
// follower's probe deadline after every heartbeat. The timerfd wakes the
// netpoller once, at its time; arming it and reading it are raw system
// calls that do not wake sysmon (rawio_linux.go). Its goroutine calls fire
// itself: a hand-off to Run's goroutine would cost a second
// goroutine switch per expiry.
type fdTimer struct {
	f    *os.File
	rc   syscall.RawConn
	fire func()

	due time.Time // when it expires (Go's monotonic clock); zero once fired

	// The arguments of the raw calls, and the calls as func values made
	// once: a closure per call would be garbage per heartbeat.
	buf     [8]byte
	expired func(fd uintptr) bool
	spec    unix.ItimerSpec
	settime func(fd uintptr)
}

// newLoopTimer returns a timerfd timer that calls fire on each expiry, or
// the portable wakeTimer (whose C the run loop selects on) if the kernel
// does not give one.
func newLoopTimer(fire func()) loopTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newWakeTimer()
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return newWakeTimer()
	}
	t := &fdTimer{f: f, rc: rc, fire: fire}
	t.expired, t.settime = t.onExpiry, t.setTime
	t.set(0)
	go t.loop()
	return t
}

// loop calls fire for each expiry until the timerfd is closed. Each expiry
// is read and handled inside one long Read: a Read per expiry would first
// read the drained timerfd again (EAGAIN) before waiting, a system call
// per heartbeat for nothing.
func (t *fdTimer) loop() {
	_ = t.rc.Read(t.expired) // returns once stop closed the timerfd
}

// onExpiry reads the timerfd's expiry count and, if it expired, fires. It
// always asks to wait for the poller again: the read drained the timerfd,
// and an expiry after it (fire may re-arm it for now) wakes the poller.
func (t *fdTimer) onExpiry(fd uintptr) bool {
	for {
		_, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&t.buf[0])), uintptr(len(t.buf)))
		switch errno {
		case syscall.EINTR:
			continue
		case 0:
			t.fire()
		}
		return false
	}
}

// C is nil: the timerfd's goroutine calls fire instead.
func (t *fdTimer) C() <-chan time.Time { return nil }

func (t *fdTimer) fired() { t.due = time.Time{} }

// set arms the timer to expire after d; a d of zero or less expires at
// once (a zero it_value would disarm it).
func (t *fdTimer) set(d time.Duration) {
	d = max(d, time.Nanosecond)
	due := time.Now().Add(d)
	if sameDue(t.due, due) {
		return
	}
	t.due = due
	t.spec = unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := t.rc.Control(t.settime); err != nil {
		panic("udp: timerfd used after stop")
	}
}

func (t *fdTimer) setTime(fd uintptr) {
	_, _, errno := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&t.spec)), 0, 0, 0)
	if errno != 0 {
		panic("udp: timerfd_settime: " + errno.Error()) // only EBADF/EFAULT/EINVAL: a bug
	}
}

// stop closes the timerfd, which ends its reader; it returns once the
// reader is done (os.File.Close waits for a Read in progress).
func (t *fdTimer) stop() { t.f.Close() }
