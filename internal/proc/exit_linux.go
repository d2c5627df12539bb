package proc

import (
	"os/exec"
	"syscall"
	"unsafe"
)

// watchExit returns a channel closed when cmd's process has exited, without
// reaping it (waitid with WNOWAIT), and the function that reaps it.
func watchExit(cmd *exec.Cmd) (<-chan struct{}, func() error) {
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		const pPID = 1
		var info [128]byte // siginfo_t
		for {
			_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(cmd.Process.Pid),
				uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
			if e != syscall.EINTR {
				return
			}
		}
	}()
	return exited, cmd.Wait
}
