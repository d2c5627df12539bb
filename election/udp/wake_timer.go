package udp

import "time"

// loopTimer is the run loop's timer: wakeTimer, or on Linux with the system
// clock a timerfd (timerfd_linux.go).
type loopTimer interface {
	// C delivers when the timer fires, for Run to select on; nil for a
	// timer that calls the run loop's onTimer itself. A fire may come
	// early (a stale one): the run loop's Tick is harmless before its
	// deadline.
	C() <-chan time.Time
	// fired records that C delivered.
	fired()
	// set arms the timer to fire after d.
	set(d time.Duration)
	// stop stops it for good.
	stop()
}

// wakeTimer is the run loop's timer. It never moves a pending timer later:
// Go leaves a timer that is Reset to a later time at its old place in the
// runtime's timer heap until that old time comes, and the netpoller (and
// sysmon) wake up for it. A follower's next deadline, the leader probe due
// ProbeGrace after the next heartbeat, moves later with every heartbeat,
// so Reset cost it one idle wake-up per heartbeat. A deadline moved later
// gets a fresh timer instead: the stopped one is dropped from the heap
// when the new one is armed.
type wakeTimer struct {
	t *time.Timer
	// due is when the pending timer fires, on Go's monotonic clock; zero
	// once it has fired.
	due time.Time
}

func newWakeTimer() *wakeTimer {
	return &wakeTimer{t: time.NewTimer(0), due: time.Now()}
}

func (w *wakeTimer) C() <-chan time.Time { return w.t.C }

func (w *wakeTimer) fired() { w.due = time.Time{} }

func (w *wakeTimer) set(d time.Duration) {
	due := time.Now().Add(d)
	if sameDue(w.due, due) {
		return
	}
	if !w.due.IsZero() && due.After(w.due) {
		w.t.Stop()
		w.t = time.NewTimer(d)
	} else {
		w.t.Reset(d)
	}
	w.due = due
}

func (w *wakeTimer) stop() { w.t.Stop() }

// dueSlack is how far apart two deadlines may be and still count as the
// same: the run loop recomputes its deadline after every event, and an
// unchanged protocol deadline (a leader's next heartbeat, after its own
// echo) comes back a few microseconds off, the time between two clock
// readings. Re-arming for that would cost a system call (timerfd) or a
// runtime wake-up (a timer moved later) for nothing.
const dueSlack = 50 * time.Microsecond

// sameDue reports whether a timer pending until armed (zero: not pending)
// may stay armed for due.
func sameDue(armed, due time.Time) bool {
	if armed.IsZero() {
		return false
	}
	diff := due.Sub(armed)
	return diff < dueSlack && diff > -dueSlack
}
