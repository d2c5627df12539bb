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

// WaitGone waits for pid, a descendant of this test binary, to be gone:
// reaped here if it was reparented to this subreaper, else (reaped by the
// run's own shim, or a zombie about to be) no longer running. It fails the
// test if the process is still running after a generous bound (a kill that
// did not happen). Poll, not sleep: the bound is never waited out.
func WaitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if Gone(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d still running", pid)
}

// Gone reports whether pid has exited, reaping it if it is this process's
// child.
func Gone(pid int) bool {
	var ws syscall.WaitStatus
	got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	if err == nil && got == pid {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}
