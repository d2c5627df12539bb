//go:build unix && !linux

package cli

import "syscall"

// demoSysProcAttr puts each demo node in its own process group, so the
// terminal's Ctrl-C reaches only the demo, which then stops the nodes in
// order. Outside Linux there is no parent-death signal: a demo killed with
// SIGKILL leaves its nodes running.
func demoSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
