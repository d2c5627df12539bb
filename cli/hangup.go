package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// hangups are the SIGHUPs the process receives. SIGHUP's default action
// ends the process, so Main catches it before anything else
// (catchHangups): `run` during its start-up, which can wait without limit
// for its bind address, would otherwise die with exit 129, no log line and
// no on_stop, which systemd's Restart=on-failure takes for a clean stop.
// run takes each as a request to reload the config file (runDaemon's
// answerHangups); any other command stops on it, as on SIGTERM, as a
// command whose terminal hung up should.
type hangups <-chan os.Signal

// catchHangups starts catching SIGHUP; stop restores its default action.
func catchHangups() (h hangups, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// stopping returns a context that also ends at the first hangup, for a
// command other than run.
func (h hangups) stopping(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		select {
		case <-h:
		case <-ctx.Done():
		}
	}()
	return ctx
}

// answerHangups reloads the config file at each hangup until ctx ends.
// One that comes before running is closed (start-up: the mode may still
// wait for its bind address, and there is no runner yet) is logged and
// remembered, and the file is re-read once running closes: the file
// start-up read may predate the edit the hangup announces. Several during
// start-up make one reload.
func (d *daemon) answerHangups(ctx context.Context, hup hangups, running <-chan struct{}) {
	pending := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-running:
			running = nil // a nil channel never fires again
			if pending {
				d.reload()
			}
		case <-hup:
			if running != nil {
				pending = true
				d.log.Info("SIGHUP during start-up; the config file is re-read once the jobs are running")
				continue
			}
			d.reload()
		}
	}
}
