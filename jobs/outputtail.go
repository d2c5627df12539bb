package jobs

import "sync"

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
		line = line[:maxTailLine] + "…"
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
