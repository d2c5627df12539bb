package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// On Linux, Run does not fork the command itself but a shim: this same
// program (/proc/self/exe) started under shimArg0, which leads the run's
// process group and starts the command in it. The shim
//
//   - gets a parent-death signal, so when lanleader dies (even by SIGKILL)
//     it kills every process of the run within orphanPoll at most;
//   - is the child subreaper of the run, so processes whose parent exited
//     are reparented to it, reaped at once, and killed when the run ends,
//     even those that left the process group (setsid, daemonizing);
//   - ignores the signals Run sends the group (the command decides), and
//     reports how the command ended on fd 3 ("exit N", "signal N",
//     "error MSG", or "unlicensed": its licence had run out before the
//     start), since its own exit status cannot carry a signal.
//
// Any program that imports this package becomes the shim when started that
// way: the package's init runs it and exits before main.
const (
	shimArg0 = "lanleader-proc-shim"
	// shimEnv carries lanleader's pid to the shim; the shim removes it
	// from the command's environment.
	shimEnv = "LANLEADER_PROC_SHIM"
	// shimLicenceEnv, when set, says the run has a Licence: its deadlines
	// come on fd 4, and the variable holds the stop grace (nanoseconds).
	// The shim removes it from the command's environment.
	shimLicenceEnv = "LANLEADER_PROC_LICENCE"
	// orphanPoll is how often the shim checks that lanleader is alive, in
	// case a parent-death signal is missed (it is not expected to be).
	orphanPoll = 200 * time.Millisecond
	// cleanupBound bounds the shim's killing of leftovers.
	cleanupBound = 2 * time.Second
)

func init() {
	if len(os.Args) > 0 && os.Args[0] == shimArg0 {
		if parent, ok := os.LookupEnv(shimEnv); ok {
			os.Exit(shim(parent, os.Args[1:]))
		}
	}
	startForkThread()
}

type reaped struct {
	pid int
	ws  syscall.WaitStatus
}

// shim runs args[1:] (args[0] is the resolved program path) and returns
// the shim's exit code.
func shim(parent string, args []string) int {
	// The command's own parent-death signal (SIGKILL: if the shim is
	// killed, its command dies too) follows this thread, which init keeps.
	runtime.LockOSThread()
	ppid, _ := strconv.Atoi(parent)
	_ = os.Unsetenv(shimEnv)
	syscall.CloseOnExec(3)
	status := os.NewFile(3, "lanleader-proc-status")
	report := func(format string, a ...any) { _, _ = fmt.Fprintf(status, format+"\n", a...) }
	if len(args) < 2 {
		report("error shim started without a command")
		return 127
	}
	_ = setSubreaper()
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	orphaned := func() bool { return os.Getppid() != ppid }
	if orphaned() {
		return 1 // lanleader died before the command started
	}
	lic, err := openLicence()
	if errors.Is(err, ErrUnlicensed) {
		report("unlicensed")
		return 126
	}
	if err != nil {
		report("error %v", err)
		return 126
	}
	cmd := &exec.Cmd{Path: args[0], Args: args[1:], Env: os.Environ(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	if err := cmd.Start(); err != nil {
		report("error %v", err)
		return 127
	}
	job := cmd.Process.Pid
	done := make(chan reaped, 64)
	go reapChildren(done)
	tick := time.NewTicker(orphanPoll)
	for {
		if lic != nil && lic.check(report) {
			// The licence ran out a stop grace ago. SIGKILL to the
			// children: the command's exit then takes the path below,
			// which kills what is left of the tree.
			for _, k := range childrenOf(os.Getpid()) {
				_ = syscall.Kill(k, syscall.SIGKILL)
			}
		}
		select {
		case <-lic.wake():
		case r := <-done:
			if r.pid != job {
				continue // an orphan of the run, reaped
			}
			killDescendants(done)
			switch ws := r.ws; {
			case ws.Signaled():
				report("signal %d", int(ws.Signal()))
				return 128 + int(ws.Signal())
			default:
				report("exit %d", ws.ExitStatus())
				return ws.ExitStatus()
			}
		case <-sigs:
			// Run signals the whole group: the command got this too and
			// decides. A parent-death signal also lands here.
			if orphaned() {
				killDescendants(done)
				return 1
			}
		case <-tick.C:
			if orphaned() {
				killDescendants(done)
				return 1
			}
		}
	}
}

// reapChildren reaps every child of the shim (the command and the orphans
// reparented to it) and reports each on done.
func reapChildren(done chan<- reaped) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil: // no children right now; orphans may still come
			time.Sleep(10 * time.Millisecond)
		default:
			done <- reaped{pid, ws}
		}
	}
}

// killDescendants SIGKILLs the shim's children until it has none: killing
// one reparents its own children to the shim, the subreaper, so the whole
// tree goes, generation by generation, whatever process group each is in.
func killDescendants(done <-chan reaped) {
	self := os.Getpid()
	deadline := time.Now().Add(cleanupBound)
	for time.Now().Before(deadline) && hasChildren() {
		kids := childrenOf(self) // a scan of /proc: only when there are leftovers
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		select {
		case <-done:
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// setSubreaper makes this process the child subreaper of its descendants.
func setSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return e
	}
	return nil
}
