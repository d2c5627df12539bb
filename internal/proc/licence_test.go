//go:build linux

package proc

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/proctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLicenceRenewedKeepsTheRun: a run whose licence is renewed goes on
// past the first deadline, ends as it would have, and is not expired.
func TestLicenceRenewedKeepsTheRun(t *testing.T) {
	lic := NewLicence(BootNow() + 300*time.Millisecond)
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				lic.Renew(BootNow() + 300*time.Millisecond)
			}
		}
	}()
	res := Run(context.Background(), Spec{Argv: sh("sleep 1; exit 3"), Licence: lic, KillGrace: time.Second})
	close(stop)
	assert.Equal(t, 3, res.ExitCode, res.String())
	assert.False(t, res.Expired)
	assert.False(t, res.Stopped)
}

// TestLicenceRunsOutWithoutLanleader: nobody renews and nobody cancels
// (lanleader stalled, as under SIGSTOP): the shim alone sends SIGTERM at the
// deadline, and SIGKILLs the whole tree, a child that left the group
// included, a stop grace later when the command ignores it.
func TestLicenceRunsOutWithoutLanleader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		signal syscall.Signal
	}{
		{"stops on SIGTERM", "sleep 30", syscall.SIGTERM},
		{"ignores SIGTERM", "trap '' TERM; setsid sleep 30 & echo $! > " + pidPlaceholder + "; sleep 30", syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "child")
			start := BootNow()
			lic := NewLicence(start + 300*time.Millisecond)
			// The bound: a shim that failed to stop it is stopped by Run
			// 10 s on, and the test fails (Stopped).
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res := Run(ctx, Spec{Argv: sh(withPIDFile(tc.script, pidFile)), Licence: lic, KillGrace: 400 * time.Millisecond})
			took := BootNow() - start
			assert.True(t, res.Expired, res.String())
			assert.Equal(t, tc.signal, res.Signal, res.String())
			assert.False(t, res.Stopped, "lanleader did not stop it: the shim did")
			assert.GreaterOrEqual(t, took, 300*time.Millisecond, "not before the deadline")
			if tc.signal == syscall.SIGKILL {
				assert.GreaterOrEqual(t, took, 700*time.Millisecond, "SIGKILL a stop grace after the SIGTERM")
				proctest.WaitGone(t, proctest.ReadPID(t, pidFile))
			}
		})
	}
}

// TestLicenceRunOutBeforeStartStartsNothing: a licence that ran out before
// the shim could start the command (lanleader stalled between its check
// and the exec) starts nothing.
func TestLicenceRunOutBeforeStartStartsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	res := Run(context.Background(), Spec{Argv: sh("touch " + marker), Licence: NewLicence(BootNow() - time.Millisecond)})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "licence ran out before the start")
	assert.NoFileExists(t, marker)
}

// A renewal to an earlier deadline changes nothing.
func TestLicenceRenewOnlyMovesLater(t *testing.T) {
	lic := NewLicence(10 * time.Second)
	lic.Renew(5 * time.Second)
	assert.Equal(t, 10*time.Second, lic.Deadline())
	lic.Renew(11 * time.Second)
	assert.Equal(t, 11*time.Second, lic.Deadline())
}

const pidPlaceholder = "PIDFILE"

func withPIDFile(script, pidFile string) string {
	return strings.ReplaceAll(script, pidPlaceholder, pidFile)
}
