//go:build linux

// Package proctest holds the test helpers that prove a killed command left
// no process behind: the test binary becomes a child subreaper, so
// grandchildren that lose their parent are reparented to it and can be
// waited for by PID.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BecomeSubreaper makes this process the child subreaper of its
// descendants. Call it from TestMain; it panics if the kernel refuses.
func BecomeSubreaper() {
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		panic("prctl(PR_SET_CHILD_SUBREAPER): " + e.Error())
	}
}

// ReadPID reads a PID a test command wrote to path (echo $$ > path).
func ReadPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err, "pid file %s", path)
	return pid
}

// WaitGone waits for pid, a descendant reparented to this subreaper, to
// exit, reaps it and returns how it ended. It fails the test if the process
// is still running after a generous bound (a kill that did not happen).
func WaitGone(t *testing.T, pid int) syscall.WaitStatus {
	t.Helper()
	type result struct {
		ws  syscall.WaitStatus
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		_, r.err = syscall.Wait4(pid, &r.ws, 0, nil)
		done <- r
	}()
	select {
	case r := <-done:
		require.NoError(t, r.err, "wait for process %d", pid)
		return r.ws
	case <-time.After(20 * time.Second):
		t.Fatalf("process %d still running", pid)
		return 0
	}
}
