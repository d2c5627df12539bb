//go:build linux

package proc

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/internal/proctest"
)

// parentEnv makes the test binary act as a lanleader that runs the
// script in it through Run and then waits to be killed.
const parentEnv = "LANLEADER_PROC_TEST_PARENT"

func actAsParent(script string) {
	Run(context.Background(), Spec{Argv: sh(script), KillGrace: time.Minute})
	select {} // the test kills us
}

// treeScript starts a tree under the shim: a shell with two sleeps, a
// nested shell with its own sleep, and a sleep that left the process group
// and session (setsid); it writes every pid, the shim's ($PPID) first, to
// the file, then waits.
const treeScript = `pids=%s
sleep 300 & a=$!
sh -c 'sleep 300 & echo $! > '$pids'.n; wait' & b=$!
setsid sleep 300 & c=$!
while [ ! -s $pids.n ]; do sleep 0.01; done
echo $PPID $$ $a $b $c $(cat $pids.n) > $pids.tmp; mv $pids.tmp $pids
wait`

// A SIGKILLed lanleader leaves nothing behind: its run's shim, the
// command and every process the command started, in the group or not, are
// gone (within a second on an idle machine; the test allows 10 s, against
// the 300 s the tree would live).
func TestRunTreeDiesWithParent(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	parent := exec.Command("/proc/self/exe", "-test.run=^$")
	parent.Env = append(os.Environ(), parentEnv+"="+strings.ReplaceAll(treeScript, "%s", pidFile))
	require.NoError(t, parent.Start())
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })

	var pids []int
	deadline := time.Now().Add(20 * time.Second)
	for len(pids) == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil {
			for _, f := range strings.Fields(string(b)) {
				p, err := strconv.Atoi(f)
				require.NoError(t, err)
				pids = append(pids, p)
			}
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	require.Len(t, pids, 6, "shim, shell, 3 children, 1 grandchild")
	for _, p := range pids {
		require.False(t, proctest.Gone(p), "process %d runs before the kill", p)
	}

	require.NoError(t, parent.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	_ = parent.Wait()
	deadline = killed.Add(10 * time.Second)
	for _, p := range pids {
		for !proctest.Gone(p) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		assert.True(t, proctest.Gone(p), "process %d survived its lanleader by 10 s", p)
	}
}

// The fork thread: a child with a parent-death signal, forked from a
// goroutine locked to a thread that then exits, is killed (the hazard);
// forked through onForkThread from the same goroutine, it lives on.
func TestForkThreadOutlivesCaller(t *testing.T) {
	for _, viaForkThread := range []bool{false, true} {
		var cmd *exec.Cmd
		tid := os.Getpid()
		// The main thread is never ended (Go parks it instead): try again
		// until the goroutine ran on another one.
		for try := 0; tid == os.Getpid(); try++ {
			require.Less(t, try, 100, "never off the main thread")
			if cmd != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
			cmd = exec.Command("sleep", "30")
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			started := make(chan int)
			go func() {
				runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
				if viaForkThread {
					onForkThread(func() { require.NoError(t, cmd.Start()) })
				} else {
					require.NoError(t, cmd.Start())
				}
				started <- syscall.Gettid()
			}()
			tid = <-started
		}
		for i := 0; i < 2000 && threadAlive(tid); i++ {
			time.Sleep(5 * time.Millisecond)
		}
		require.False(t, threadAlive(tid), "the caller's thread exited")
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// The parent-death signal was sent when the thread exited, but
		// a loaded machine may take a while to end the child: wait for
		// it generously; the child that must live gets 300 ms to die.
		wait := 300 * time.Millisecond
		if !viaForkThread {
			wait = 20 * time.Second
		}
		select {
		case err := <-exited:
			assert.False(t, viaForkThread, "killed with its forking thread: %v", err)
		case <-time.After(wait):
			assert.True(t, viaForkThread, "forked on the exiting thread, yet alive after %v", wait)
			_ = cmd.Process.Kill()
			<-exited
		}
	}
}

func threadAlive(tid int) bool {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid))
	return err == nil
}

// AdoptOrphans kills and reaps a process reparented to it, and leaves the
// processes Run started to Run.
func TestAdoptOrphans(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() { done <- adoptOrphans(ctx, discard(), ready) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	// An orphan made before AdoptOrphans listens for SIGCHLD would wait
	// for the 30 s sweep.
	select {
	case <-ready:
	case err := <-done:
		done <- err // for the deferred receive
		require.FailNow(t, "AdoptOrphans ended before listening", "%v", err)
	}

	// A double fork outside Run: the middle shell exits at once, so the
	// sleep is reparented to this process.
	pidFile := filepath.Join(t.TempDir(), "pid")
	require.NoError(t, exec.Command("/bin/sh", "-c", "sleep 300 & echo $! > "+pidFile).Run())
	proctest.WaitGone(t, proctest.ReadPID(t, pidFile))

	// Run's own process is not reaped behind its back.
	res := Run(context.Background(), Spec{Argv: sh("sleep 0.2; exit 7")})
	require.NoError(t, res.Err)
	assert.Equal(t, 7, res.ExitCode)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
