package proctest

import "time"

// StallWatch notes the longest stretch in which this test process ran
// none of its goroutines: descheduled on a loaded machine, stopped
// (SIGSTOP), paused by the runtime. A lease or licence held by real time
// rightly runs out across such a stall when it is longer than the
// validity's slack, so a test whose assertions need the holder to have
// renewed in time checks the watch and, if it stalled, proves nothing and
// runs again (a bounded number of times).
type StallWatch struct {
	stop, done chan struct{}
	longest    time.Duration
}

// stallTick is how often the watch asks to run: a stall shows as a gap
// between two ticks much longer than this.
const stallTick = 5 * time.Millisecond

// WatchStalls starts a StallWatch; Stop ends it.
func WatchStalls() *StallWatch {
	w := &StallWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(stallTick)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-w.stop:
				w.longest = max(w.longest, time.Since(last))
				return
			case <-tick.C:
				now := time.Now()
				w.longest = max(w.longest, now.Sub(last))
				last = now
			}
		}
	}()
	return w
}

// Stop ends the watch and returns the longest gap between two of its
// ticks: how long, at most, the process stalled (plus a tick).
func (w *StallWatch) Stop() time.Duration {
	close(w.stop)
	<-w.done
	return w.longest
}
