package udp

import "time"

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

// C is the channel the timer fires on.
func (w *wakeTimer) C() <-chan time.Time { return w.t.C }

// fired records that C delivered.
func (w *wakeTimer) fired() { w.due = time.Time{} }

// set arms the timer to fire after d.
func (w *wakeTimer) set(d time.Duration) {
	due := time.Now().Add(d)
	if !w.due.IsZero() && due.After(w.due) {
		w.t.Stop()
		w.t = time.NewTimer(d)
	} else {
		w.t.Reset(d)
	}
	w.due = due
}

// stop stops the pending timer.
func (w *wakeTimer) stop() { w.t.Stop() }
