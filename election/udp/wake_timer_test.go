package udp

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestWakeTimerFiresAtTheLastDeadline: a deadline moved later (a fresh
// timer) or earlier (Reset) fires once, at the deadline set last.
func TestWakeTimerFiresAtTheLastDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWakeTimer()
		defer w.stop()
		<-w.C()
		w.fired()
		start := time.Now()

		w.set(10 * time.Millisecond)
		w.set(30 * time.Millisecond) // later
		<-w.C()
		w.fired()
		assert.Equal(t, 30*time.Millisecond, time.Since(start))

		w.set(30 * time.Millisecond)
		w.set(5 * time.Millisecond) // earlier
		<-w.C()
		w.fired()
		assert.Equal(t, 35*time.Millisecond, time.Since(start))

		w.set(time.Hour)
		select {
		case <-w.C():
			t.Fatal("fired before its deadline")
		case <-time.After(time.Minute):
		}
	})
}
