package cli

import "syscall"

// demoSysProcAttr puts each demo node in its own process group (so the
// terminal's Ctrl-C reaches only the demo, which then stops the nodes in
// order) and has the kernel SIGKILL it if the demo dies first, so a killed
// demo leaves no node behind. Pdeathsig fires when the thread that started
// the child exits; the Go runtime does not retire threads of goroutines that
// never locked one, so in practice that is when the demo exits.
func demoSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
