//go:build linux

package proc

import (
	"context"
	"os"
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
// Renewed in time, that is: a renewal sent after the deadline it extends
// (the test process stalled longer than the validity, as a loaded 2-core
// machine can stall it) lets the licence run out, rightly, and proves
// nothing; such an attempt is run again, a few times at most.
func TestLicenceRenewedKeepsTheRun(t *testing.T) {
	for attempt := 1; ; attempt++ {
		res, late := runRenewed(300*time.Millisecond, "sleep 1; exit 3")
		if late == 0 {
			assert.Equal(t, 3, res.ExitCode, res.String())
			assert.False(t, res.Expired)
			assert.False(t, res.Stopped)
			return
		}
		require.Less(t, attempt, 5, "the holder stalled past its licence in every attempt (last: %v)", late)
		t.Logf("attempt %d: a deadline passed unrenewed for %v, the holder stalled (%s); again", attempt, late, res)
	}
}

// runRenewed runs script under a licence valid for validity, renewed to
// validity ahead every validity/6 until the run ends, and returns the
// result and by how much, at most, a deadline had passed before the
// renewal after it went out or the run ended (0: always renewed in time).
func runRenewed(validity time.Duration, script string) (res Result, late time.Duration) {
	lic := NewLicence(BootNow() + validity)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(validity / 6)
		defer tick.Stop()
		// lateBy notes a deadline that passed before the renewal after it
		// went out (or, at stop, before the run ended).
		lateBy := func(deadline time.Duration) {
			if now := BootNow(); now >= deadline {
				late = max(late, now-deadline)
			}
		}
		for {
			select {
			case <-stop:
				lateBy(lic.Deadline())
				return
			case <-tick.C:
				before := lic.Deadline()
				lic.Renew(BootNow() + validity)
				lateBy(before)
			}
		}
	}()
	res = Run(context.Background(), Spec{Argv: sh(script), Licence: lic, KillGrace: time.Second})
	close(stop)
	<-done
	return res, late
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
	assert.ErrorIs(t, res.Err, ErrUnlicensed, "a caller tells it apart from a command that could not start")
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

// The shim's decisions on the boot clock (shimLicence.step): SIGTERM once
// the deadline passes, SIGKILL a grace after the deadline, whenever the
// shim gets to look: a shim that wakes after deadline + grace (the host
// slept through it) kills at once, since a successor may have started its
// copy by then; a renewal that came before the deadline moves it, one
// after the SIGTERM does not.
func TestLicenceShimKillsByTheDeadlinePlusGrace(t *testing.T) {
	const grace = 5 * time.Second
	newLic := func(deadline time.Duration) *shimLicence {
		l := &shimLicence{grace: grace, deadline: deadline}
		l.renewed.Store(int64(deadline))
		return l
	}
	t.Run("on time", func(t *testing.T) {
		l := newLic(10 * time.Second)
		term, kill, next := l.step(9 * time.Second)
		assert.False(t, term || kill)
		assert.Equal(t, 10*time.Second, next)
		term, kill, next = l.step(10 * time.Second)
		assert.True(t, term)
		assert.False(t, kill)
		assert.Equal(t, 15*time.Second, next, "SIGKILL a grace after the deadline")
		term, kill, _ = l.step(12 * time.Second)
		assert.False(t, term || kill, "one SIGTERM")
		term, kill, _ = l.step(15 * time.Second)
		assert.False(t, term)
		assert.True(t, kill)
	})
	t.Run("late SIGTERM", func(t *testing.T) {
		l := newLic(10 * time.Second)
		term, kill, next := l.step(13 * time.Second) // the shim ran late
		assert.True(t, term)
		assert.False(t, kill)
		assert.Equal(t, 15*time.Second, next, "not a whole grace after the late SIGTERM")
	})
	t.Run("woke past deadline and grace", func(t *testing.T) {
		l := newLic(10 * time.Second)
		term, kill, _ := l.step(70 * time.Second) // the host slept a minute
		assert.True(t, term, "SIGTERM")
		assert.True(t, kill, "and SIGKILL at once")
	})
	t.Run("renewals", func(t *testing.T) {
		l := newLic(10 * time.Second)
		l.renewed.Store(int64(20 * time.Second))
		term, kill, next := l.step(12 * time.Second)
		assert.False(t, term || kill, "renewed before the deadline")
		assert.Equal(t, 20*time.Second, next)
		term, _, _ = l.step(21 * time.Second)
		require.True(t, term)
		l.renewed.Store(int64(40 * time.Second))
		_, kill, _ = l.step(25 * time.Second)
		assert.True(t, kill, "a renewal after the SIGTERM is too late")
	})
}

// A shim that starts slowly (an exec on a loaded host) finds its first
// deadline passed, but renewals lanleader sent meanwhile already waiting
// on the pipe: it takes the latest of them, not only the first, and does
// not wait for more. It took the first alone and refused to start a run
// its holder had kept renewing.
func TestLicenceShimTakesTheRenewalsSentWhileItStarted(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	fd := int(r.Fd())
	now := BootNow()
	lic := NewLicence(now - time.Second)
	require.NoError(t, lic.attach(w)) // the first deadline, passed
	lic.Renew(now + time.Minute)      // sent while the shim started
	lic.Renew(now + 2*time.Minute)
	d, err := readDeadline(r)
	require.NoError(t, err)
	assert.Equal(t, now-time.Second, d)
	assert.Equal(t, now+2*time.Minute, latestQueued(fd, d))
	assert.Equal(t, now, latestQueued(fd, now), "nothing more queued: no wait")
	lic.Renew(now + 3*time.Minute)
	d, err = readDeadline(r) // blocking again
	require.NoError(t, err)
	assert.Equal(t, now+3*time.Minute, d)
}
