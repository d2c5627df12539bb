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
// calls that do not wake sysmon (rawio_linux.go).
type fdTimer struct {
	f  *os.File
	rc syscall.RawConn
	c  chan time.Time // capacity 1: a fire not yet taken stands for any later one

	due time.Time // when it expires (Go's monotonic clock); zero once fired

	// The arguments of the raw calls, and the calls as func values made
	// once: a closure per call would be garbage per heartbeat.
	buf     [8]byte
	read    func(fd uintptr) bool
	spec    unix.ItimerSpec
	settime func(fd uintptr)
}

// newLoopTimer returns a timerfd timer, or the portable wakeTimer if the
// kernel does not give one.
func newLoopTimer() loopTimer {
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
	t := &fdTimer{f: f, rc: rc, c: make(chan time.Time, 1)}
	t.read, t.settime = t.readExpiry, t.setTime
	t.set(0)
	go t.loop()
	return t
}

// loop passes each expiry to c until the timerfd is closed.
func (t *fdTimer) loop() {
	for {
		if err := t.rc.Read(t.read); err != nil {
			return // closed by stop
		}
		select {
		case t.c <- time.Now():
		default:
		}
	}
}

func (t *fdTimer) readExpiry(fd uintptr) bool {
	for {
		_, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&t.buf[0])), uintptr(len(t.buf)))
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // not expired: wait for the poller
		}
		return true
	}
}

func (t *fdTimer) C() <-chan time.Time { return t.c }

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

// stop closes the timerfd, which ends its reader.
func (t *fdTimer) stop() { t.f.Close() }
