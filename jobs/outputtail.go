package jobs

import (
	"sync"
	"unicode/utf8"
)

// OutputTailLines is how many of its last output lines a run record keeps.
const OutputTailLines = 10

// outputTail keeps the last OutputTailLines lines of a process's output.
// proc calls OnLine from one goroutine per stream, so it locks.
type outputTail struct {
	mu  sync.Mutex
	buf []string
}

// maxTailLine bounds each kept line, so ten lines fit an environment
// variable and a log line.
const maxTailLine = 400

func (t *outputTail) add(line string) {
	if len(line) > maxTailLine {
		// Cut at a character's start: a tail goes into JSON and
		// environment variables, which want valid UTF-8.
		n := maxTailLine
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		line = line[:n] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, line)
	if len(t.buf) > OutputTailLines {
		t.buf = t.buf[len(t.buf)-OutputTailLines:]
	}
}

func (t *outputTail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.buf...)
}
