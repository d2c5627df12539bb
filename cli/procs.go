package cli

import (
	"os"
	"runtime"
	"runtime/debug"
)

// idleGCPercent is the garbage collector's target `run` uses unless the
// operator set GOGC. The daemon's live heap is about 0.3-0.5 MiB and an
// idle node makes about 15 KB of garbage a second; Go's minimum heap goal
// is 4 MiB × GOGC/100, so at the default of 100 the first collection came
// only after minutes, once the heap held 4 MiB of garbage, and the process
// kept those pages. At 25 the goal is 1 MiB: one collection a minute at a
// 50 ms interval, under a millisecond of CPU each (GODEBUG=gctrace=1).
const idleGCPercent = 25

// idleRuntime sizes the Go runtime for a daemon that is idle most of the
// time, unless the operator set GOMAXPROCS or GOGC.
//
// One P: the daemon's work is a few microseconds per heartbeat (jobs run
// as child processes, not goroutines); what an idle node spends is
// wake-ups, and with more than one P every packet handed from the socket
// reader to the election loop also wakes a second thread to look for work.
// One P measured about 15 % less idle CPU at a 50 ms interval
// (docs/benchmarks.md).
func idleRuntime() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(idleGCPercent)
	}
}
