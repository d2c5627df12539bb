// Package ratelog limits how often one kind of WARN line is logged, and
// counts the lines it held back: a dead interface fails every send, a
// flood of bad requests comes thousands a second, and one line every
// Every says so well enough.
package ratelog

import (
	"log/slog"
	"sync"
	"time"
)

// DefaultEvery is Limiter.Every when left zero.
const DefaultEvery = 10 * time.Second

// Limiter logs one kind of line at most once per Every; the next line it
// logs carries "suppressed": how many it held back meanwhile. The zero
// value is ready to use. It is safe for concurrent use.
type Limiter struct {
	// Every is the least time between two lines; zero means DefaultEvery.
	Every time.Duration

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// Warn logs msg with args at WARN, unless a line went out less than Every
// ago.
func (l *Limiter) Warn(log *slog.Logger, msg string, args ...any) {
	every := l.Every
	if every == 0 {
		every = DefaultEvery
	}
	l.mu.Lock()
	now := time.Now()
	if !l.last.IsZero() && now.Sub(l.last) < every {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	l.last = now
	skipped := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	if skipped > 0 {
		args = append(args, "suppressed", skipped)
	}
	log.Warn(msg, args...)
}
