package proc

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// orphanSweep is how often AdoptOrphans looks for adopted processes even
// without a SIGCHLD; sweepGap is the least time between two sweeps (each
// reads /proc/*/stat). A shim that dies hands its orphans over before its
// SIGCHLD arrives, so the sweep that signal triggers finds them.
const (
	orphanSweep = 30 * time.Second
	sweepGap    = 200 * time.Millisecond
)

// AdoptOrphans makes this process the child subreaper of its descendants
// (PR_SET_CHILD_SUBREAPER) and, until ctx ends, kills and reaps every
// process reparented to it: what is left of a run whose shim was killed
// outright (the kill after kill_grace, the OOM killer). Call it only in a
// program that starts all its child processes through Run: it reaps any
// child Run did not start.
func AdoptOrphans(ctx context.Context, log *slog.Logger) error {
	return adoptOrphans(ctx, log, nil)
}

// adoptOrphans is AdoptOrphans that closes ready, if not nil, once it
// listens for SIGCHLD: a process orphaned before then waits for the next
// sweep of the ticker.
func adoptOrphans(ctx context.Context, log *slog.Logger, ready chan<- struct{}) error {
	if err := setSubreaper(); err != nil {
		return err
	}
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)
	if ready != nil {
		close(ready)
	}
	t := time.NewTicker(orphanSweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-chld:
		case <-t.C:
		}
		select { // coalesce a burst of SIGCHLDs into one sweep after it
		case <-ctx.Done():
			return nil
		case <-time.After(sweepGap):
		}
		for _, pid := range sweepOrphans() {
			log.Warn("killed a process left behind by a job or hook", "pid", pid)
		}
	}
}

// sweepOrphans SIGKILLs and reaps the children Run did not start, and
// returns those it found still running. With no child at all (an idle
// node: no run, no leftover) it does not scan /proc, whose every
// /proc/PID/stat it would read: on a busy host that was hundreds of
// system calls every orphanSweep.
func sweepOrphans() []int {
	managed.mu.Lock()
	defer managed.mu.Unlock()
	if !hasChildren() {
		return nil
	}
	var killed []int
	for _, pid := range childrenOf(os.Getpid()) {
		if managed.pids[pid] {
			continue
		}
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err == nil && got == pid {
			continue // a zombie: reaped
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		killed = append(killed, pid)
	}
	return killed
}
