//go:build unix && !linux

package proc

import "os/exec"

// watchExit returns a channel closed when cmd's process has exited, and the
// function that returns its wait error. Without waitid(WNOWAIT) the process
// is reaped at once, so the group kill that follows has a tiny window in
// which the pgid could be reused; Linux, the supported platform, has none.
func watchExit(cmd *exec.Cmd) (<-chan struct{}, func() error) {
	exited := make(chan struct{})
	var err error
	go func() {
		err = cmd.Wait()
		close(exited)
	}()
	return exited, func() error { <-exited; return err }
}
