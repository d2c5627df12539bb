package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// DefaultKillGrace is how long Run waits after SIGTERM before it sends
// SIGKILL to the process group, when Spec.KillGrace is zero.
const DefaultKillGrace = 10 * time.Second

// KillSettle bounds how long a run's processes can outlive the SIGKILL Run
// sends its group (or lanleader's own death): the group dies with the
// signal; on Linux, what left the group is killed by the shim, or by
// lanleader as child subreaper (AdoptOrphans) a sweep gap after the shim
// dies, and a dead lanleader's shims kill their runs within their poll.
// A successor that waits for a run to be gone waits this much past the
// kill.
const KillSettle = time.Second

// DefaultOutputGrace bounds how long Run waits for the output pipes to close
// once the group has been killed; only a process that left the group
// (setsid) can keep them open that long.
const DefaultOutputGrace = 2 * time.Second

// Spec describes one command to run.
type Spec struct {
	// Argv is the program and its arguments; Argv[0] is looked up in PATH.
	Argv []string
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Env is the complete environment of the process (KEY=value). A nil Env
	// means an empty environment, not the caller's: callers decide.
	Env []string
	// KillGrace is the time between SIGTERM and SIGKILL when the run is
	// stopped. Zero means DefaultKillGrace.
	KillGrace time.Duration
	// Licence, if set, bounds the run's life from outside lanleader (see
	// Licence): the shim stops it on its own once the licence runs out.
	Licence *Licence
	// OnStart, if set, is called with the pid of the run's process group
	// (on Linux the shim's, which leads the group) once it has started.
	OnStart func(pgid int)
	// OnLine receives every line of output, without its newline, from one
	// goroutine per stream. partial is true when a line longer than
	// MaxLineBytes was split: the pieces arrive in order, the last with
	// partial false. Nil discards output.
	OnLine func(stream Stream, line string, partial bool)
}

// Stream names an output stream.
type Stream string

// The two output streams.
const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// Result is how a run ended.
type Result struct {
	// Started is when the process started (zero if it never did).
	Started time.Time
	// Duration is the time from start to exit.
	Duration time.Duration
	// ExitCode is the process's exit status, or -1 if it was killed by a
	// signal or never started.
	ExitCode int
	// Signal is the signal that killed the process, 0 otherwise.
	Signal syscall.Signal
	// Stopped is true when ctx ended before the process exited, so Run
	// signalled the group.
	Stopped bool
	// Killed is true when the group had to be sent SIGKILL because it did
	// not exit within KillGrace after SIGTERM.
	Killed bool
	// Expired is true when the run's Licence ran out while it went on, so
	// the shim stopped it (SIGTERM, SIGKILL after KillGrace).
	Expired bool
	// Err is set when the process could not start, or its wait failed.
	Err error
}

// OK reports whether the process ran and exited with status 0.
func (r Result) OK() bool { return r.Err == nil && r.ExitCode == 0 && r.Signal == 0 }

// String describes the result for logs: "exit 0", "signal killed", or the
// start error.
func (r Result) String() string {
	switch {
	case r.Err != nil:
		return r.Err.Error()
	case r.Signal != 0:
		return "signal " + r.Signal.String()
	default:
		return fmt.Sprintf("exit %d", r.ExitCode)
	}
}

// killGrace is s.KillGrace, defaulted.
func killGrace(s Spec) time.Duration {
	if s.KillGrace <= 0 {
		return DefaultKillGrace
	}
	return s.KillGrace
}

// Run starts s in a new process group and waits for it to exit. If ctx ends
// first, the whole group gets SIGTERM, then SIGKILL after s.KillGrace. When
// the main process has exited, whatever it left running in its group is
// killed too, and Run returns once all output has been delivered.
func Run(ctx context.Context, s Spec) Result {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return Result{ExitCode: -1, Err: errors.New("proc: empty command")}
	}
	grace := killGrace(s)
	if s.Env == nil {
		s.Env = []string{}
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{ExitCode: -1, Err: fmt.Errorf("proc: pipe: %w", err)}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Result{ExitCode: -1, Err: fmt.Errorf("proc: pipe: %w", err)}
	}
	l, err := prepare(s)
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return Result{ExitCode: -1, Err: fmt.Errorf("proc: start %s: %w", s.Argv[0], err)}
	}
	cmd := l.cmd
	cmd.Stdout, cmd.Stderr = outW, errW

	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); readLines(outR, Stdout, s.OnLine) }()
	go func() { defer readers.Done(); readLines(errR, Stderr, s.OnLine) }()

	started := time.Now()
	err = l.start()
	// The child has its own copies; ours must close so EOF can arrive.
	outW.Close()
	errW.Close()
	if err != nil {
		readers.Wait()
		outR.Close()
		errR.Close()
		return Result{ExitCode: -1, Err: fmt.Errorf("proc: start %s: %w", s.Argv[0], err)}
	}
	pgid := cmd.Process.Pid
	if s.OnStart != nil {
		s.OnStart(pgid)
	}

	// exited is closed when the main process has exited; on Linux it is
	// not yet reaped then, so its pid, which is also the group id, cannot
	// be reused until reap, and signalling the group is always safe.
	exited, reap := watchExit(cmd)

	res := Result{Started: started}
	select {
	case <-exited:
	case <-ctx.Done():
		res.Stopped = true
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		select {
		case <-exited:
			t.Stop()
		case <-t.C:
			res.Killed = true
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		}
	}
	// Leftovers in the group (background children) die with the run.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	werr := reap()
	res.Duration = time.Since(started)

	// Output pipes close once every group member is gone; a process that
	// escaped the group with setsid could hold them open for ever.
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	t := time.NewTimer(DefaultOutputGrace)
	select {
	case <-done:
		t.Stop()
	case <-t.C:
		outR.Close()
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()

	res.ExitCode = -1
	var st syscall.WaitStatus
	ok := false
	if cmd.ProcessState != nil {
		st, ok = cmd.ProcessState.Sys().(syscall.WaitStatus)
	}
	if ok {
		switch {
		case st.Exited():
			res.ExitCode = st.ExitStatus()
		case st.Signaled():
			res.Signal = st.Signal()
		}
	} else if werr != nil {
		res.Err = fmt.Errorf("proc: wait %s: %w", s.Argv[0], werr)
	}
	l.finish(&res)
	if res.Err != nil && werr == nil {
		res.Err = fmt.Errorf("proc: start %s: %w", s.Argv[0], res.Err)
	}
	return res
}
