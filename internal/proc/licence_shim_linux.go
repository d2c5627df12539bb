package proc

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// shimLicence is the shim's side of a Licence: the latest deadline
// lanleader sent, and what the shim did when it passed.
type shimLicence struct {
	grace    time.Duration
	deadline time.Duration
	// renewed is the latest deadline read from the pipe.
	renewed atomic.Int64
	timer   *time.Timer
	// termAt is when the shim sent SIGTERM for an expired licence (zero:
	// not yet); killed, whether it has SIGKILLed the tree since.
	termAt time.Duration
	killed bool
}

// openLicence reads the run's licence (fd 4) when it has one: the first
// deadline, which must not have passed, and then every renewal in the
// background. It returns nil without a licence.
func openLicence() (*shimLicence, error) {
	v, ok := os.LookupEnv(shimLicenceEnv)
	if !ok {
		return nil, nil
	}
	_ = os.Unsetenv(shimLicenceEnv)
	grace, err := strconv.ParseInt(v, 10, 64)
	if err != nil || grace < 0 {
		return nil, errors.New("bad licence grace " + strconv.Quote(v))
	}
	syscall.CloseOnExec(4)
	f := os.NewFile(4, "lanleader-proc-licence")
	first, err := readDeadline(f)
	if err != nil {
		return nil, errors.New("no licence: " + err.Error())
	}
	if BootNow() >= first {
		return nil, errors.New("licence ran out before the start")
	}
	l := &shimLicence{grace: time.Duration(grace), deadline: first}
	l.renewed.Store(int64(first))
	l.timer = time.NewTimer(first - BootNow())
	go func() {
		for {
			d, err := readDeadline(f)
			if err != nil { // lanleader closed it or died: no more renewals
				return
			}
			l.renewed.Store(int64(d)) // Licence.Renew only moves it later
		}
	}()
	return l, nil
}

func readDeadline(f *os.File) (time.Duration, error) {
	var b [8]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, err
	}
	return time.Duration(binary.BigEndian.Uint64(b[:])), nil
}

// wake returns the deadline's timer, which the shim's loop waits on besides
// the run (nil without a licence, or once it has done its work). Renewals
// are taken in check, at the top of every turn of the loop.
func (l *shimLicence) wake() <-chan time.Time {
	if l == nil || l.killed {
		return nil
	}
	return l.timer.C
}

// check takes the renewals that came, and, the deadline past, sends
// SIGTERM to the run's group once, then reports whether it is time for
// SIGKILL of the whole tree (grace after the SIGTERM; the caller kills).
// It rearms the timer for the next thing to do. CLOCK_BOOTTIME decides, so
// a host that slept past the deadline stops the run as it wakes (the loop's
// tick comes then too).
func (l *shimLicence) check(report func(string, ...any)) (kill bool) {
	if l.killed {
		return false
	}
	if d := time.Duration(l.renewed.Load()); d > l.deadline && l.termAt == 0 {
		l.deadline = d // a renewal after the SIGTERM comes too late
	}
	now := BootNow()
	next := l.deadline
	switch {
	case l.termAt != 0 && now >= l.termAt+l.grace:
		l.killed = true
		return true
	case l.termAt != 0:
		next = l.termAt + l.grace
	case now >= l.deadline:
		report("expired")
		l.termAt = now
		_ = syscall.Kill(-os.Getpid(), syscall.SIGTERM) // the shim ignores its own
		next = now + l.grace
	}
	l.timer.Reset(max(next-now, time.Millisecond))
	return false
}
