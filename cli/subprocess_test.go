package cli

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// binary is `lanleader run` as a process of its own: this test binary
// acting as lanleader (asMainEnv), started through Main as systemd would
// start it, its JSON log lines read from stderr.
type binary struct {
	cmd   *exec.Cmd
	lines <-chan map[string]any
	exit  chan error
}

// startBinary starts `lanleader run --log-format json ARGS...`. The
// process is killed when the test ends if it is still running.
func startBinary(t *testing.T, args ...string) *binary {
	t.Helper()
	asMainChildren(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, append([]string{"run", "--log-format", "json"}, args...)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	b := &binary{cmd: cmd, lines: jsonLines(stderr), exit: make(chan error, 1)}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return b
}

// signal sends sig to the process.
func (b *binary) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, b.cmd.Process.Signal(sig))
}

// wait waits for the process to exit, at most until guard, and returns
// its exit code, or -1 and the signal that killed it.
func (b *binary) wait(t *testing.T, guard <-chan time.Time) (int, syscall.Signal) {
	t.Helper()
	go func() { b.exit <- b.cmd.Wait() }()
	select {
	case err := <-b.exit:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			require.NoError(t, err)
		}
		ws := b.cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			return -1, ws.Signal()
		}
		return ws.ExitStatus(), 0
	case <-guard:
		require.FailNow(t, "timed out waiting for lanleader to exit")
		return 0, 0
	}
}

// freeTCPPort returns a TCP port on loopback that nothing listens on.
func freeTCPPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
