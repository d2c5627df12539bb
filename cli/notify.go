package cli

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// sdNotifier tells systemd (Type=notify or notify-reload) what the daemon
// is doing, through $NOTIFY_SOCKET. Without the variable every call does
// nothing.
type sdNotifier struct {
	log   *slog.Logger
	ready sync.Once
}

func (n *sdNotifier) send(states ...string) {
	if _, err := sd.SdNotify(false, strings.Join(states, "\n")); err != nil {
		n.log.Warn("cannot notify systemd", "state", states[0], "err", err)
	}
}

// joined sends READY=1 the first time it is called: the node has joined
// (it leads or knows a leader).
func (n *sdNotifier) joined() {
	n.ready.Do(func() { n.send(sd.SdNotifyReady) })
}

// reloading sends RELOADING=1 with the monotonic time systemd wants for
// Type=notify-reload; reloaded (READY=1) must follow.
func (n *sdNotifier) reloading() {
	n.send(sd.SdNotifyReloading, sd.SdNotifyMonotonicUsec())
}

func (n *sdNotifier) reloaded() { n.send(sd.SdNotifyReady) }
func (n *sdNotifier) stopping() { n.send(sd.SdNotifyStopping) }

// watch polls until the node has joined, then calls ready and sends
// READY=1; and, if systemd set WatchdogSec=, sends WATCHDOG=1 every half of
// it for as long as alive returns. alive asks the elector and the job
// runner for their state under their locks, so a deadlocked loop stops the
// pings and systemd restarts the process. watch returns when ctx ends.
func (n *sdNotifier) watch(ctx context.Context, joined func() bool, ready, alive func()) {
	const poll = 50 * time.Millisecond
	wd, err := sd.SdWatchdogEnabled(false)
	if err != nil {
		n.log.Warn("ignoring a malformed systemd watchdog setting", "err", err)
	}
	every := wd / 2
	isReady := false
	var last time.Time
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if !isReady && joined() {
			isReady = true
			ready()
			n.joined()
			if every > 0 {
				t.Reset(every) // no more polling: an idle node wakes for the pings only
			}
		}
		if every > 0 && time.Since(last) >= every {
			alive()
			n.send(sd.SdNotifyWatchdog)
			last = time.Now()
		}
		if isReady && every <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
