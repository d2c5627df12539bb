package jobs

import (
	"context"

	"github.com/lanleader/lanleader/internal/proc"
)

// SetExecForTest replaces r's process executor. It exists for the external
// test package (cluster_test.go), which runs Runners wired to real udp
// Electors inside a synctest bubble, where real processes cannot run: a
// goroutine blocked in wait(2) is not durably blocked.
func SetExecForTest(r *Runner, exec func(context.Context, proc.Spec) proc.Result) {
	r.exec = exec
}
