package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// managed holds the pids Run started and has not reaped yet, so that
// AdoptOrphans leaves them to Run. mu is held across fork and registration,
// so AdoptOrphans never sees a child of Run's that is not registered yet.
var managed = struct {
	mu   sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// launch is one started run: the shim's process and how to learn how the
// command ended.
type launch struct {
	cmd     *exec.Cmd
	status  *os.File // read end of the shim's status pipe
	licence *Licence // Spec.Licence, nil if none
}

// prepare builds the shim command for s. The program is looked up in
// lanleader's PATH, as exec.Command would.
func prepare(s Spec) (*launch, error) {
	path := s.Argv[0]
	if !strings.Contains(path, "/") {
		p, err := exec.LookPath(path)
		if err != nil {
			return nil, err
		}
		path = p
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	env := append(append([]string{}, s.Env...), shimEnv+"="+strconv.Itoa(os.Getpid()))
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       append([]string{shimArg0, path}, s.Argv...),
		Dir:        s.Dir,
		Env:        env,
		ExtraFiles: []*os.File{statusW},
		// SIGTERM, not SIGKILL: the shim catches it and kills the run.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM},
	}
	l := &launch{cmd: cmd, status: statusR, licence: s.Licence}
	if s.Licence != nil {
		// fd 4: the licence's deadlines; the stop grace rides in the
		// environment.
		licR, licW, err := os.Pipe()
		if err != nil {
			_ = statusR.Close()
			_ = statusW.Close()
			return nil, fmt.Errorf("pipe: %w", err)
		}
		if err := s.Licence.attach(licW); err != nil {
			_ = statusR.Close()
			_ = statusW.Close()
			_ = licR.Close()
			_ = licW.Close()
			return nil, fmt.Errorf("licence: %w", err)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, licR)
		cmd.Env = append(cmd.Env, shimLicenceEnv+"="+strconv.FormatInt(int64(killGrace(s)), 10))
	}
	return l, nil
}

// start forks the shim from the fork thread (see forkLoop) and registers
// it for AdoptOrphans.
func (l *launch) start() error {
	var err error
	onForkThread(func() {
		managed.mu.Lock()
		defer managed.mu.Unlock()
		err = l.cmd.Start()
		if err == nil {
			managed.pids[l.cmd.Process.Pid] = true
		}
	})
	// The shim has its copies of the status pipe's write end and of the
	// licence pipe's read end.
	for _, f := range l.cmd.ExtraFiles {
		_ = f.Close()
	}
	if err != nil {
		_ = l.status.Close()
		if l.licence != nil {
			l.licence.detach()
		}
	}
	return err
}

// finish unregisters the reaped shim and fills res from its report, when
// it made one (a shim killed by a signal reports nothing: its own wait
// status then stands).
func (l *launch) finish(res *Result) {
	managed.mu.Lock()
	delete(managed.pids, l.cmd.Process.Pid)
	managed.mu.Unlock()
	if l.licence != nil {
		l.licence.detach()
	}
	b, _ := io.ReadAll(io.LimitReader(l.status, 4096))
	_ = l.status.Close()
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		kind, arg, _ := strings.Cut(line, " ")
		n, nerr := strconv.Atoi(arg)
		switch {
		case kind == "expired":
			res.Expired = true
		case kind == "exit" && nerr == nil:
			res.ExitCode, res.Signal = n, 0
		case kind == "signal" && nerr == nil:
			res.ExitCode, res.Signal = -1, syscall.Signal(n)
		case kind == "error":
			res.ExitCode, res.Signal = -1, 0
			res.Err = errors.New(arg)
		case kind == "unlicensed":
			res.ExitCode, res.Signal = -1, 0
			res.Err = ErrUnlicensed
		}
	}
}
