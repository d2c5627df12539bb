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
	// termed is set once the shim sent SIGTERM for an expired licence;
	// killed, once it has SIGKILLed the tree since.
	termed, killed bool
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
	first = latestQueued(4, first)
	if BootNow() >= first {
		return nil, ErrUnlicensed
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

// latestQueued returns the latest of first and the deadlines already
// waiting on the licence pipe fd: renewals lanleader sent while this shim
// was starting (a slow exec on a loaded host), which count as much as
// those it will read later. It does not wait for more. Every deadline is
// one atomic 8-byte write, so the pipe holds whole ones.
func latestQueued(fd int, first time.Duration) time.Duration {
	if syscall.SetNonblock(fd, true) != nil {
		return first
	}
	defer func() { _ = syscall.SetNonblock(fd, false) }()
	var b [8]byte
	for {
		n, err := syscall.Read(fd, b[:])
		if err != nil || n != len(b) {
			return first
		}
		first = max(first, time.Duration(binary.BigEndian.Uint64(b[:])))
	}
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
// SIGKILL of the whole tree (the caller kills). It rearms the timer for the
// next thing to do.
func (l *shimLicence) check(report func(string, ...any)) (kill bool) {
	if l.killed {
		return false
	}
	now := BootNow()
	term, kill, next := l.step(now)
	if term {
		report("expired")
		_ = syscall.Kill(-os.Getpid(), syscall.SIGTERM) // the shim ignores its own
	}
	if !kill {
		l.timer.Reset(max(next-now, time.Millisecond))
	}
	return kill
}

// step decides what is due at now (BootNow's clock): SIGTERM once the
// deadline has passed, SIGKILL a stop grace after the deadline, not after
// the SIGTERM. The run is gone by the deadline plus its grace, which is
// what a successor waits for, even when the shim itself ran late: a host
// that slept (suspend, a VM frozen) past that instant kills the run as it
// wakes rather than giving it another grace beside the successor's. next
// is when to look again.
func (l *shimLicence) step(now time.Duration) (term, kill bool, next time.Duration) {
	if d := time.Duration(l.renewed.Load()); d > l.deadline && !l.termed {
		l.deadline = d // a renewal after the SIGTERM comes too late
	}
	if now < l.deadline {
		return false, false, l.deadline
	}
	term, l.termed = !l.termed, true
	if now >= l.deadline+l.grace {
		l.killed = true
		return term, true, 0
	}
	return term, false, l.deadline + l.grace
}
