package proctest

import "go.uber.org/goleak"

// IgnoreForkThread is the goleak option for the goroutine that package proc
// starts at initialization and keeps for the life of the process: it forks
// every command from one OS thread that never exits, so the commands'
// parent-death signal fires only when the process dies.
func IgnoreForkThread() goleak.Option {
	return goleak.IgnoreAnyFunction("github.com/lanleader/lanleader/internal/proc.forkLoop")
}
