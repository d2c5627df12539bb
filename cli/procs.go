package cli

import (
	"os"
	"runtime"
)

// oneProc runs Go code of the daemon on one OS thread at a time unless the
// operator set GOMAXPROCS. The daemon's work is a few microseconds per
// heartbeat (jobs run as child processes, not goroutines); what an idle node
// spends is wake-ups, and with more than one P every packet handed from the
// socket reader to the election loop also wakes a second thread to look
// for work. One P measured about 15 % less idle CPU at a 50 ms interval
// (docs/benchmarks.md).
func oneProc() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
