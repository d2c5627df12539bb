//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
)

// launch is one started run. Without Linux's parent-death signal and
// child subreaper there is no shim: the command is started directly, and
// dies with lanleader only if it notices by itself.
type launch struct{ cmd *exec.Cmd }

func prepare(s Spec) (*launch, error) {
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &launch{cmd: cmd}, cmd.Err
}

func (l *launch) start() error { return l.cmd.Start() }

func (l *launch) finish(*Result) {}
