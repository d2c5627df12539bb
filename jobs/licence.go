package jobs

import (
	"context"
	"time"

	"github.com/lanleader/lanleader/internal/proc"
)

// Licences. A process the leader starts that must not outlive its
// leader's right to act (a cancel job's attempt, a service's copy) runs
// under a proc.Licence: a deadline on the host's boot clock that its shim
// enforces on its own (SIGTERM, then SIGKILL of the tree a grace later),
// whether lanleader is alive, stopped (SIGSTOP), paused or dead. The
// leader renews it every Licence/5 while this node may act (renewLicence),
// to the moment it looked plus Licence. So such a process is gone within
// Licence + its grace + proc.LicenceKillSettle after the last moment its
// node could act (executor.stopTime, serviceStop): the stop bound its
// ledger entry carries (quiet.go). A finish job's attempt, which outlives
// leadership by design, has a licence that is never renewed: its timeout,
// counted from right before the guard said yes, so the shim enforces the
// timeout even when lanleader cannot; without a timeout it has none.

// Licence is how long a licence lasts past the moment its leader last saw
// that it may act. Short, because a successor that cannot tell a dead
// leader from a stalled one waits for it; long enough that a leader's
// ordinary scheduling delays (well under the election's own pause
// threshold) never let it run out.
const Licence = 300 * time.Millisecond

// runLicence returns the licence of an attempt of spec, for a guard that
// said yes after boot (proc.BootNow, read before asking): a process of a
// cancel job runs for Licence unless renewed; one of a finish job for its
// timeout; nil for a finish job without a timeout and for requests.
func runLicence(spec *Spec, boot time.Duration) *proc.Licence {
	switch {
	case spec.HTTP != nil:
		return nil
	case spec.OnLeaderLoss == LeaderLossCancel:
		return proc.NewLicence(boot + Licence)
	case spec.Timeout > 0:
		return proc.NewLicence(boot + spec.Timeout)
	}
	return nil
}

// renewLicence renews lic every Licence/5 while this node may act (the
// guard), until ctx ends. The clock is read before the guard is asked: a
// renewal never reaches past Licence from a moment the guard said yes.
func (r *Runner) renewLicence(ctx context.Context, lic *proc.Licence) {
	t := time.NewTicker(Licence / 5)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		boot := r.bootNow()
		if r.mayAct() && ctx.Err() == nil {
			lic.Renew(boot + Licence)
		}
	}
}

// unlicensedWhy says why a process whose licence ran out before its exec
// (proc.ErrUnlicensed: the shim's own last check) did nothing.
const unlicensedWhy = "its licence ran out before the exec (this node could not act as leader meanwhile)"
