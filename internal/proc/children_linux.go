package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// hasChildren reports whether this process has any child, running or not
// yet reaped (waitid with WNOHANG|WNOWAIT: nothing is reaped). No child
// means no descendant at all in a subreaper, whose orphans come to it.
func hasChildren() bool {
	const pAll = 0
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pAll, 0, uintptr(unsafe.Pointer(&info)),
			syscall.WEXITED|syscall.WNOHANG|syscall.WNOWAIT, 0, 0)
		if e != syscall.EINTR {
			return e != syscall.ECHILD
		}
	}
}

// childrenOf lists the processes whose parent is pid, zombies included, by
// reading /proc/*/stat (which, unlike /proc/PID/task/TID/children, needs no
// kernel option).
func childrenOf(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if ppid, ok := statPPID(b); ok && ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// statPPID returns the parent pid from a /proc/PID/stat line: "pid (comm)
// state ppid ...", where comm may hold spaces and parentheses.
func statPPID(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
