package proc

import (
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"time"
)

// LicenceKillSettle bounds how long a run whose licence ran out outlives the
// SIGKILL its shim sends a stop grace later: the shim kills its children
// and, as their subreaper, what they leave behind, at once (milliseconds).
// (A shim killed from outside takes its command with it, by parent-death
// signal; what that command left is swept by lanleader within KillSettle.)
const LicenceKillSettle = 250 * time.Millisecond

// Licence bounds a run's life from outside lanleader. Spec.Licence hands
// it to Run, whose shim (Linux) enforces it on its own: once the licence's
// deadline passes without a renewal, the shim sends SIGTERM to the run's
// process group and, KillGrace after the deadline, SIGKILL to its whole
// tree — whether lanleader is alive, busy, stopped (SIGSTOP) or dead. A run whose licence
// has run out before its command starts does not start (Result.Err).
//
// Deadlines are instants of BootNow's clock (CLOCK_BOOTTIME: monotonic, the
// same for every process of the host, counting through suspend), so a
// renewal that arrives late, or a host that slept, never extends the run
// past the deadline its holder meant: a shim that wakes after the deadline
// and the grace kills at once. Elsewhere than Linux the licence is
// not enforced: lanleader alone stops the run.
type Licence struct {
	mu       sync.Mutex
	deadline time.Duration
	w        *os.File // the shim's licence pipe, once Run started it
	closed   bool
}

// ErrUnlicensed is Result.Err of a run whose Licence had run out before
// its command could start: nothing of it ran (the holder stalled between
// its check and the exec).
var ErrUnlicensed = errors.New("licence ran out before the start")

// NewLicence returns a licence that runs out at deadline (BootNow's clock).
func NewLicence(deadline time.Duration) *Licence { return &Licence{deadline: deadline} }

// Renew moves the deadline to deadline if that is later. Read BootNow
// before checking that the run may go on, and renew to that reading plus
// the validity: a holder stalled between the check and the renewal then
// renews no further than it was entitled to.
func (l *Licence) Renew(deadline time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if deadline <= l.deadline || l.closed {
		return
	}
	l.deadline = deadline
	if l.w != nil {
		_ = l.send(deadline)
	}
}

// Deadline returns the current deadline.
func (l *Licence) Deadline() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// attach hands the licence to a starting shim through w, sending the
// current deadline first. Run calls it before the shim starts.
func (l *Licence) attach(w *os.File) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w = w
	return l.send(l.deadline)
}

// detach closes the pipe once the run has ended; later renewals go
// nowhere.
func (l *Licence) detach() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.w != nil {
		_ = l.w.Close()
		l.w = nil
	}
}

// send writes one deadline (8 bytes, big endian nanoseconds). A pipe write
// of 8 bytes is atomic; it never blocks for long, since the shim reads
// every renewal at once. Must hold l.mu.
func (l *Licence) send(deadline time.Duration) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(deadline))
	_, err := l.w.Write(b[:])
	return err
}
