//go:build race

package udp

import "runtime"

// Go 1.26's race runtime gives each synctest bubble one race context for
// the timers it runs, and uses it without a lock from whichever thread
// runs an expired channel timer (runtime.maybeRunChan): two goroutines of
// one bubble doing so at once crash the race detector (SIGSEGV in
// __tsan::SlotLock). With one P, one goroutine runs at a time.
func init() { runtime.GOMAXPROCS(1) }
