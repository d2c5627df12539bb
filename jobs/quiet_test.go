package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/proc"
)

// life is one run's processes as the fake executor saw them: from the
// first attempt's start to the last attempt's end (the end is zero while
// it goes on).
type life struct {
	node, job, instant string
	start, end         time.Time
}

// lifetimes is an executor for several nodes that records each run's life.
// Its processes ignore SIGTERM: stopped, an attempt ends only when SIGKILL
// comes, its kill grace later, as a job that traps SIGTERM would. An
// attempt under a licence is stopped so too once the licence runs out, as
// its shim would, whatever its node does.
type lifetimes struct {
	mu   sync.Mutex
	runs []*life
}

// exec returns node's executor: each attempt lasts d unless stopped.
func (l *lifetimes) exec(node string, d time.Duration) func(context.Context, proc.Spec) proc.Result {
	return func(ctx context.Context, s proc.Spec) proc.Result {
		env := envMap(s.Env)
		rec := &life{node: node, job: env["LANLEADER_JOB"], instant: env["LANLEADER_SCHEDULED_AT"], start: time.Now()}
		l.mu.Lock()
		l.runs = append(l.runs, rec)
		l.mu.Unlock()
		res := proc.Result{Started: rec.start}
		t := time.NewTimer(d)
		defer t.Stop()
		shim := time.NewTicker(Licence / 30)
		defer shim.Stop()
	wait:
		for {
			select {
			case <-t.C:
				break wait
			case <-shim.C:
				if expired(s.Licence) {
					time.Sleep(s.KillGrace) // SIGTERM ignored
					res.Expired, res.Killed, res.ExitCode, res.Signal = true, true, -1, 9
					break wait
				}
			case <-ctx.Done():
				time.Sleep(s.KillGrace) // SIGTERM ignored
				res.Stopped, res.Killed, res.ExitCode, res.Signal = true, true, -1, 9
				break wait
			}
		}
		l.mu.Lock()
		rec.end = time.Now()
		l.mu.Unlock()
		return res
	}
}

func (l *lifetimes) of(node string) []life {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []life
	for _, r := range l.runs {
		if r.node == node {
			out = append(out, *r)
		}
	}
	return out
}

// overlapping returns a pair of runs of one job on two nodes that were
// going at once, if any.
func (l *lifetimes) overlapping() (life, life, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.runs {
		for _, y := range l.runs {
			if x.node == y.node || x.job != y.job {
				continue
			}
			xEnd, yEnd := x.end, y.end
			if xEnd.IsZero() {
				xEnd = time.Now().Add(time.Hour)
			}
			if yEnd.IsZero() {
				yEnd = time.Now().Add(time.Hour)
			}
			if x.start.Before(yEnd) && y.start.Before(xEnd) {
				return *x, *y, true
			}
		}
	}
	return life{}, life{}, false
}

// cancelStop is the stop bound of a cancel job's process with kill grace
// grace: its licence runs out, SIGTERM, SIGKILL a grace later, gone.
func cancelStop(grace time.Duration) time.Duration {
	return Licence + grace + proc.LicenceKillSettle
}

// stretched is d timed by another host's clock, as a successor counts it:
// a fifth more, for clock rates differing by up to 20 %.
func stretched(d time.Duration) time.Duration { return d * 6 / 5 }

// quorumSuccession is udp quorum mode's promise: a deposed leader stops
// acting before its successor starts.
var quorumSuccession = election.Succession{Bounded: true}

// cutOff is two runners: a leads term 1 and runs spec, its processes
// ignoring SIGTERM (lifetimes); b follows and has heard a's ledger. Then
// a is cut off: its lease ends, it stops leading (its cancel runs get
// SIGTERM, and SIGKILL a kill grace later), and b leads term 2 at once,
// hearing nothing more from a.
type cutOff struct {
	a, b   *Runner
	ea, eb *fakeElector
	lives  *lifetimes
	logs   *logSink
	// takeover is when b's leadership started.
	takeover time.Time
	// paused makes a's guard say no, as a SIGSTOPped lanleader's would
	// if it could answer: it renews no licence.
	paused atomic.Bool
}

// newCutOff builds the two runners: b with succession, a's runs lasting d.
func newCutOff(t *testing.T, ctx context.Context, spec Spec, succession election.Succession, d time.Duration) *cutOff {
	return newCutOffSpecs(t, ctx, spec, spec, succession, d)
}

// newCutOffSpecs is newCutOff with a's spec of the job and b's apart (a
// rolling config change).
func newCutOffSpecs(t *testing.T, ctx context.Context, specA, specB Spec, succession election.Succession, d time.Duration) *cutOff {
	c := &cutOff{lives: &lifetimes{}, logs: &logSink{}}
	c.a = newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{specA}, Succession: succession,
		CanRun: func() bool { return !c.paused.Load() }}, nil)
	c.a.exec = c.lives.exec("a", d)
	c.b = newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{specB}, Succession: succession,
		Gather: time.Second, Logger: slog.New(c.logs)}, nil)
	c.b.exec = c.lives.exec("b", d)
	c.ea, c.eb = newFakeElector(ctx, "a", c.a.Callbacks()), newFakeElector(ctx, "b", c.b.Callbacks())
	c.ea.lead(1)
	c.eb.follow("a", 1)
	return c
}

// cut makes b hear a's ledger as it stands, then cuts a off and makes b
// lead.
func (c *cutOff) cut(t *testing.T) {
	synctest.Wait()
	require.NoError(t, c.b.AdoptLedgerFrom("a", HoldsNothing, c.a.Ledger()))
	c.ea.follow("", 1)
	c.eb.lead(2)
	c.takeover = time.Now()
}

func (c *cutOff) stop(t *testing.T, cancel context.CancelFunc) {
	cancel()
	require.NoError(t, c.a.Wait(context.Background()))
	require.NoError(t, c.b.Wait(context.Background()))
}

// A leader cut off mid-run stops its run when it stops acting, and the run
// dies by SIGKILL its kill grace later (it ignores SIGTERM). Its successor
// reruns the instant (rerun_interrupted) only once that run can no longer
// be going, never beside it: in quorum mode (the old leader stopped before
// the successor was elected) kill_grace and the kill's settling time after
// the takeover; in etcd mode the TTL more (a leader key deleted by hand
// elects the successor at once, while the old leader acts until its last
// renewal runs out); for a finish run, bounded by its timeout, that
// timeout more. Without the wait it reran it a gathering window after the
// takeover, beside the dying run.
func TestSuccessorRerunsACutOffLeadersRunOnlyOnceItIsGone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		spec       Spec
		succession election.Succession
		cutAfter   time.Duration // into the run of 00:01:00
		wait       time.Duration // from the takeover to the rerun
	}{{
		name:       "quorum, cancel",
		spec:       Spec{KillGrace: 10 * time.Second},
		succession: quorumSuccession,
		cutAfter:   30 * time.Second,
		wait:       stretched(cancelStop(10 * time.Second)),
	}, {
		name:       "etcd, cancel",
		spec:       Spec{KillGrace: 3 * time.Second},
		succession: election.Succession{Bounded: true, Overhang: 2 * time.Second},
		cutAfter:   30 * time.Second,
		wait:       2*time.Second + stretched(cancelStop(3*time.Second)),
	}, {
		name:       "quorum, finish with a timeout",
		spec:       Spec{OnLeaderLoss: LeaderLossFinish, Timeout: 20 * time.Second, KillGrace: 5 * time.Second},
		succession: quorumSuccession,
		cutAfter:   5 * time.Second, // the attempt times out at 00:01:20, is killed at 00:01:25
		wait:       stretched(20*time.Second + 5*time.Second + proc.LicenceKillSettle),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				spec := tc.spec
				spec.Name, spec.Schedule, spec.Shell, spec.RerunInterrupted = "m", "* * * * *", "x", true
				c := newCutOff(t, ctx, spec, tc.succession, 5*time.Minute)
				time.Sleep(minute(1).Sub(time.Now()) + tc.cutAfter)
				c.cut(t)
				time.Sleep(tc.wait + 5*time.Second)
				synctest.Wait()

				aRuns, bRuns := c.lives.of("a"), c.lives.of("b")
				require.Len(t, aRuns, 1)
				require.Len(t, bRuns, 1, "b reran a's instant once")
				assert.Equal(t, "2000-01-01T00:01:00Z", bRuns[0].instant)
				assert.False(t, aRuns[0].end.IsZero(), "a's run died")
				assert.Equal(t, c.takeover.Add(tc.wait), bRuns[0].start, "b reran it as soon as it could no longer be going")
				x, y, overlap := c.lives.overlapping()
				assert.False(t, overlap, "runs overlapped: %+v and %+v", x, y)
				waits := c.logs.find("jobs: previous leader's run may still be going on its node; waiting until it cannot be before concluding it (overlap policy applies meanwhile)")
				require.Len(t, waits, 1)
				assert.Equal(t, "a", waits[0]["node"])
				assert.Len(t, c.logs.find("jobs: previous leader's run can no longer be going (stopped with its leadership, kill grace over); run interrupted, running it again (rerun_interrupted)"), 1)
				c.stop(t, cancel)
			})
		})
	}
}

// A rolling config change shortens kill_grace (or the timeout of a finish
// job) on the successor while the old leader's run still has the long
// one: the successor waits by the stop bound the run's ledger entry
// carries, the old leader's, not by its own config. It fell back on its
// own only for an entry from a node of an earlier version, which carries
// none. Without the bound on the wire it reran the instant 3.6 s after the
// takeover, beside the run dying for 20 s.
func TestSuccessorWaitsByTheStopBoundTheRunCarries(t *testing.T) {
	for _, tc := range []struct {
		name         string
		specA, specB Spec
		oldVersion   bool // a's ledger as an earlier version sends it
		wait         time.Duration
	}{{
		name:  "cancel, kill_grace 20 s on a, 2 s on b",
		specA: Spec{KillGrace: 20 * time.Second}, specB: Spec{KillGrace: 2 * time.Second},
		wait: stretched(cancelStop(20 * time.Second)),
	}, {
		name:  "finish, timeout 40 s on a, 10 s on b",
		specA: Spec{OnLeaderLoss: LeaderLossFinish, Timeout: 40 * time.Second, KillGrace: 2 * time.Second},
		specB: Spec{OnLeaderLoss: LeaderLossFinish, Timeout: 10 * time.Second, KillGrace: 2 * time.Second},
		wait:  stretched(40*time.Second + 2*time.Second + proc.LicenceKillSettle),
	}, {
		name:  "an entry from an earlier version: b's own config",
		specA: Spec{KillGrace: 2 * time.Second}, specB: Spec{KillGrace: 5 * time.Second},
		oldVersion: true,
		wait:       stretched(cancelStop(5 * time.Second)),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				specA, specB := tc.specA, tc.specB
				for _, s := range []*Spec{&specA, &specB} {
					s.Name, s.Schedule, s.Shell, s.RerunInterrupted = "m", "0 * * * *", "x", true
				}
				c := newCutOffSpecs(t, ctx, specA, specB, quorumSuccession, 5*time.Minute)
				time.Sleep(time.Hour + 10*time.Second) // a runs 01:00:00
				synctest.Wait()
				l, err := DecodeLedger(c.a.Ledger())
				require.NoError(t, err)
				if tc.oldVersion {
					for i := range l.Entries {
						l.Entries[i].Stop = StopBound{}
					}
				}
				require.NoError(t, c.b.AdoptLedgerFrom("a", SaysNoHolds, l.Encode()))
				c.ea.follow("", 1)
				c.eb.lead(2)
				c.takeover = time.Now()
				time.Sleep(tc.wait + 5*time.Second)
				synctest.Wait()

				bRuns := c.lives.of("b")
				require.Len(t, bRuns, 1, "b reran a's instant once")
				assert.Equal(t, c.takeover.Add(tc.wait), bRuns[0].start, "b reran it as soon as it could no longer be going")
				if !tc.oldVersion {
					x, y, overlap := c.lives.overlapping()
					assert.False(t, overlap, "runs overlapped: %+v and %+v", x, y)
				}
				c.stop(t, cancel)
			})
		})
	}
}

// A leader's lanleader is stopped (SIGSTOP of the daemon alone) while its
// cancel run goes on: it neither stops the run nor hears that it lost its
// leadership. Its successor waits the run's stop bound and reruns the
// instant; the run is gone by then: its shim stopped it once its licence,
// no longer renewed, ran out (SIGTERM ignored, SIGKILL a kill grace
// later). Without the licence it went on beside the rerun.
func TestAStoppedLeadersCancelRunIsGoneBeforeItsSuccessorReruns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "m", Schedule: "0 * * * *", Shell: "x", KillGrace: 10 * time.Second, RerunInterrupted: true}
		c := newCutOff(t, ctx, spec, quorumSuccession, 5*time.Minute)
		time.Sleep(time.Hour + 10*time.Second) // a runs 01:00:00
		synctest.Wait()
		require.NoError(t, c.b.AdoptLedgerFrom("a", SaysNoHolds, c.a.Ledger()))
		stopped := time.Now()
		c.paused.Store(true)
		c.eb.lead(2) // quorum mode: a's lease ran out, b is elected
		c.takeover = time.Now()
		time.Sleep(time.Minute)
		synctest.Wait()

		aRuns, bRuns := c.lives.of("a"), c.lives.of("b")
		require.Len(t, aRuns, 1)
		require.False(t, aRuns[0].end.IsZero(), "a's run was stopped by its shim")
		assert.False(t, aRuns[0].end.After(stopped.Add(cancelStop(spec.KillGrace))), "within its licence and kill grace: %v", aRuns[0].end.Sub(stopped))
		require.Len(t, bRuns, 1)
		assert.Equal(t, c.takeover.Add(stretched(cancelStop(spec.KillGrace))), bRuns[0].start)
		x, y, overlap := c.lives.overlapping()
		assert.False(t, overlap, "runs overlapped: %+v and %+v", x, y)
		runs := c.a.History().Runs("m", 1)
		require.Len(t, runs, 1)
		assert.Equal(t, OutcomeCancelled, runs[0].Outcome)
		assert.Contains(t, runs[0].Error, "cancelled by its shim")
		c.stop(t, cancel)
	})
}

// While a cut-off leader's run may still be going, its job's instants
// (overlap: skip) and manual runs are refused as for a run of the new
// leader's own, with a WARN naming the node and until when; the run is
// concluded interrupted at that moment (not rerun here), and the next
// instant runs.
func TestSuccessorSkipsInstantsWhileACutOffLeadersRunMayGoOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "m", Schedule: "*/10 * * * * *", Shell: "x", KillGrace: 15 * time.Second}
		c := newCutOff(t, ctx, spec, quorumSuccession, 25*time.Second)
		time.Sleep(15 * time.Second) // a runs 00:00:10
		c.cut(t)                     // 00:00:15; a's run dies at 00:00:30
		time.Sleep(10 * time.Second)
		synctest.Wait()
		_, err := c.b.Trigger("m")
		assert.ErrorIs(t, err, ErrOverlap, "a manual run waits too")
		time.Sleep(20 * time.Second) // 00:00:45
		synctest.Wait()

		bRuns := c.lives.of("b")
		require.Len(t, bRuns, 1)
		assert.Equal(t, "2000-01-01T00:00:40Z", bRuns[0].instant, "00:00:20 and 00:00:30 skipped, no rerun")
		_, _, overlap := c.lives.overlapping()
		assert.False(t, overlap)
		assert.Equal(t, uint64(2), c.b.Snapshot()[0].Skipped.Overlap)
		skips := c.logs.find("jobs: not starting: previous leader's run may still be going on its node (overlap: skip)")
		require.Len(t, skips, 2)
		assert.Equal(t, "a", skips[0]["node"])
		assert.Equal(t, c.takeover.Add(stretched(cancelStop(15*time.Second))).String(), skips[0]["until"])
		assert.Len(t, c.logs.find("jobs: previous leader's run can no longer be going (stopped with its leadership, kill grace over); run interrupted, not running it again"), 1)
		runs := c.b.History().Runs("m", 10)
		require.NotEmpty(t, runs)
		assert.Equal(t, OutcomeInterrupted, runs[0].Outcome, "%+v", runs)
		c.stop(t, cancel)
	})
}

// Without coordination (static, env, udp without quorum: the zero
// Succession) nothing bounds a deposed leader: the successor concludes the
// run at its takeover and reruns it after its gathering window, beside the
// old run if that one is only cut off. This is what holds in those modes
// (docs/jobs.md), pinned here so that it changes only on purpose.
func TestWithoutCoordinationTheSuccessorDoesNotWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "m", Schedule: "* * * * *", Shell: "x", KillGrace: 10 * time.Second, RerunInterrupted: true}
		c := newCutOff(t, ctx, spec, election.Succession{}, 5*time.Minute)
		time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
		c.cut(t)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		bRuns := c.lives.of("b")
		require.Len(t, bRuns, 1)
		assert.Equal(t, c.takeover.Add(time.Second), bRuns[0].start, "at the end of the gathering window")
		_, _, overlap := c.lives.overlapping()
		assert.True(t, overlap, "the old run was still dying")
		c.stop(t, cancel)
	})
}

// A cut-off leader's manual run holds its job the same way: instants are
// skipped until it can no longer be going; then it is concluded
// interrupted and, being manual, never run again.
func TestSuccessorWaitsForACutOffLeadersManualRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "m", Schedule: "*/10 * * * * *", Shell: "x", KillGrace: 15 * time.Second, RerunInterrupted: true}
		c := newCutOff(t, ctx, spec, quorumSuccession, 10*time.Minute)
		time.Sleep(5 * time.Second)
		_, err := c.a.Trigger("m") // 00:00:05, runs on and on
		require.NoError(t, err)
		time.Sleep(2 * time.Second) // 00:00:10 skipped on a: its manual run goes on
		c.cut(t)                    // 00:00:07
		time.Sleep(40 * time.Second)
		synctest.Wait()

		bRuns := c.lives.of("b")
		require.Len(t, bRuns, 1)
		assert.Equal(t, "2000-01-01T00:00:30Z", bRuns[0].instant, "00:00:10 and 00:00:20 skipped: the manual run may go on until 00:00:26.2")
		_, _, overlap := c.lives.overlapping()
		assert.False(t, overlap)
		assert.Len(t, c.logs.find("jobs: previous leader's manual run may still be going on its node; waiting until it cannot be before concluding it"), 1)
		assert.Len(t, c.logs.find("jobs: previous leader's run can no longer be going (stopped with its leadership, kill grace over); manual run interrupted"), 1)
		c.stop(t, cancel)
	})
}

// A run this node's previous process started died with that process: a
// restarted leader reruns it a kill's settling time after it leads, not a
// kill grace later, in any mode; counted a fifth longer, as the kernel
// settles it in real time and this host's clock may run that fast.
func TestRestartedLeaderWaitsOnlyForItsOwnDeadRunToSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := Spec{Name: "m", Schedule: "* * * * *", Shell: "x", KillGrace: 10 * time.Second, RerunInterrupted: true}
		lives := &lifetimes{}
		ctx, cancel := context.WithCancel(t.Context())
		a := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{spec}, Succession: quorumSuccession}, nil)
		a.exec = lives.exec("a", 5*time.Minute)
		newFakeElector(ctx, "a", a.Callbacks()).lead(1)
		time.Sleep(minute(1).Sub(time.Now()) + 10*time.Second)
		synctest.Wait()
		disk := a.StateLedger()
		cancel() // killed: its run dies with it
		require.NoError(t, a.Wait(context.Background()))

		ctx, cancel = context.WithCancel(t.Context())
		a2 := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{spec}, Succession: quorumSuccession}, nil)
		a2.exec = lives.exec("a", 5*time.Minute)
		require.NoError(t, a2.AdoptLedger(disk))
		e2 := newFakeElector(ctx, "a", a2.Callbacks())
		e2.follow("a", 1) // it learns who led term 1
		takeover := time.Now()
		e2.lead(2)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		runs := lives.of("a")
		require.Len(t, runs, 2)
		assert.Equal(t, "2000-01-01T00:01:00Z", runs[1].instant)
		assert.Equal(t, takeover.Add(election.OtherClock(proc.KillSettle)), runs[1].start)
		cancel()
		require.NoError(t, a2.Wait(context.Background()))
	})
}

// holdingPair is a deposed leader a and its successor b: a leads term 1
// and runs spec (its processes lasting d and ignoring SIGTERM); depose
// makes b lead term 2 (quorum mode's promise) and a follow it, still
// connected: while a holds runs its ledger reaches b, marked, once a
// second (as on each of b's heartbeats), and once more unmarked when it
// stops holding. silent drops what a sends.
type holdingPair struct {
	a, b     *Runner
	lives    *lifetimes
	logs     *logSink
	takeover time.Time

	depose func()

	holding, leads, silent atomic.Bool
	wg                     sync.WaitGroup
}

func newHoldingPair(t *testing.T, ctx context.Context, spec Spec, d time.Duration) *holdingPair {
	p := &holdingPair{lives: &lifetimes{}, logs: &logSink{}}
	p.a = newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{spec}, OnHolding: p.holding.Store}, nil)
	p.a.exec = p.lives.exec("a", d)
	p.b = newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Succession: quorumSuccession,
		Gather: time.Second, HoldLapse: holdLapseForTest, Logger: slog.New(p.logs)}, nil)
	p.b.exec = p.lives.exec("b", d)
	ea, eb := newFakeElector(ctx, "a", p.a.Callbacks()), newFakeElector(ctx, "b", p.b.Callbacks())
	ea.lead(1)
	eb.follow("a", 1)
	p.wg.Go(func() {
		held := false
		for ctx.Err() == nil {
			time.Sleep(time.Second)
			now := p.holding.Load()
			if !p.silent.Load() && (!p.leads.Load() || now || held) {
				word := SaysNoHolds // a leads: its heartbeat
				switch {
				case p.leads.Load() && now:
					word = HoldsMarked
				case p.leads.Load():
					word = HoldsNothing
				}
				require.NoError(t, p.b.AdoptLedgerFrom("a", word, p.a.Ledger()))
			}
			held = now
		}
	})
	p.depose = func() {
		p.leads.Store(true)
		ea.follow("b", 2)
		eb.lead(2)
		p.takeover = time.Now()
	}
	return p
}

func (p *holdingPair) stop(t *testing.T, cancel context.CancelFunc) {
	cancel()
	p.wg.Wait()
	require.NoError(t, p.a.Wait(context.Background()))
	require.NoError(t, p.b.Wait(context.Background()))
}

// A deposed leader that stays connected holds its cancel run while it dies
// (SIGTERM ignored, kill_grace long), then is cut off: the hold lapses
// unrenewed before the run can be gone. The successor presumes it still
// going until then, and reruns it only after; without that it reran it
// when the hold lapsed, beside the dying run.
func TestSuccessorWaitsPastALapsedHoldForARunThatMayGoOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "m", Schedule: "* * * * *", Shell: "x", KillGrace: 20 * time.Second, RerunInterrupted: true}
		p := newHoldingPair(t, ctx, spec, 5*time.Minute)
		time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
		p.depose() // 00:01:30: a's run dies at 00:01:50
		time.Sleep(5 * time.Second)
		p.silent.Store(true) // 00:01:35: its hold lapses at 00:01:44 or so
		time.Sleep(45 * time.Second)
		synctest.Wait()

		bRuns := p.lives.of("b")
		require.Len(t, bRuns, 1)
		assert.Equal(t, p.takeover.Add(stretched(cancelStop(20*time.Second))), bRuns[0].start)
		x, y, overlap := p.lives.overlapping()
		assert.False(t, overlap, "%+v %+v", x, y)
		p.stop(t, cancel)
	})
}

// A busy NAS: the deposed leader holds a finish run (150 s) and its
// lanleader stalls, alive, for longer than the hold's lapse (15 s against
// 10 s), then speaks again. With a timeout on the job the run has an end
// the successor can wait for: the stall changes nothing, the run is not
// taken for interrupted nor rerun, and the job runs again only after its
// outcome. Without a timeout nothing bounds the run and the hold lapse is
// all there is: the successor reruns the instant during the stall, beside
// the run (the documented limit check-config warns of).
func TestSuccessorKeepsAStalledHoldersRunWhenItHasATimeout(t *testing.T) {
	for _, timeout := range []time.Duration{10 * time.Minute, 0} {
		t.Run(fmt.Sprintf("timeout %v", timeout), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				spec := Spec{Name: "m", Schedule: "* * * * *", Shell: "x", OnLeaderLoss: LeaderLossFinish,
					Timeout: timeout, RerunInterrupted: true}
				p := newHoldingPair(t, ctx, spec, 150*time.Second)
				time.Sleep(minute(1).Sub(time.Now()) + 30*time.Second)
				p.depose() // 00:01:30; a's run ends at 00:03:30
				time.Sleep(10 * time.Second)
				p.silent.Store(true) // 00:01:40: stalled
				time.Sleep(15 * time.Second)
				p.silent.Store(false) // 00:01:55: alive again
				time.Sleep(minute(4).Add(10 * time.Second).Sub(time.Now()))
				synctest.Wait()

				bRuns := p.lives.of("b")
				require.NotEmpty(t, bRuns)
				_, _, overlap := p.lives.overlapping()
				if timeout == 0 {
					assert.Equal(t, "2000-01-01T00:01:00Z", bRuns[0].instant, "rerun when the hold lapsed")
					assert.True(t, overlap)
				} else {
					assert.Equal(t, "2000-01-01T00:04:00Z", bRuns[0].instant, "nothing before a's run ended")
					assert.False(t, overlap)
					for _, rec := range p.b.History().Runs("m", 10) {
						assert.NotEqual(t, OutcomeInterrupted, rec.Outcome, "%+v", rec)
					}
				}
				p.stop(t, cancel)
			})
		})
	}
}

// How long after its leader stops acting a run can still be going, by
// kind and on_leader_loss: a process's kill grace and the kill's settling;
// a finish run's timeout before that; an http request, aborted at once,
// nothing more; a finish run without a timeout, no bound.
func TestStopBound(t *testing.T) {
	r := newTestRunner(t, "a", &fakeExec{}, Spec{Name: "m", Schedule: "* * * * *", Shell: "x"})
	req := &HTTPRequest{URL: "https://example.org/hook"}
	for name, tc := range map[string]struct {
		spec Spec
		want time.Duration
		ok   bool
	}{
		"process, cancel, default grace": {Spec{}, cancelStop(DefaultKillGrace), true},
		"process, cancel":                {Spec{KillGrace: 3 * time.Second}, cancelStop(3 * time.Second), true},
		"process, finish, timeout":       {Spec{OnLeaderLoss: LeaderLossFinish, Timeout: time.Minute, KillGrace: 3 * time.Second}, time.Minute + 3*time.Second + proc.LicenceKillSettle, true},
		"process, finish, no timeout":    {Spec{OnLeaderLoss: LeaderLossFinish}, 0, false},
		"http, cancel":                   {Spec{HTTP: req}, 0, true},
		"http, finish, timeout":          {Spec{HTTP: req, OnLeaderLoss: LeaderLossFinish, Timeout: time.Minute}, time.Minute, true},
		"http, finish, no timeout":       {Spec{HTTP: req, OnLeaderLoss: LeaderLossFinish}, 0, false},
	} {
		stop := r.runStop(&tc.spec)
		got, ok := stop.Bound()
		assert.True(t, stop.Carried(), name)
		assert.Equal(t, tc.ok, ok, name)
		assert.Equal(t, tc.want, got, name)
	}
}

// A running entry's stop bound is the run's, whoever relays it: a copy of
// the same run relayed by a node of an earlier version, which carries
// none, does not take it away; an ended entry carries none.
func TestARelayWithoutTheStopBoundKeepsIt(t *testing.T) {
	r := newTestRunner(t, "b", &fakeExec{}, Spec{Name: "m", Schedule: "* * * * *", Shell: "x"})
	run := LedgerEntry{JobID: JobIDOf("m"), Instant: minute(1), Outcome: OutcomeRunning, Term: 1, Stop: stopWithin(30 * time.Second)}
	bare := run
	bare.Stop = StopBound{}
	require.NoError(t, r.AdoptLedgerFrom("a", SaysNoHolds, Ledger{Entries: []LedgerEntry{run}}.Encode()))
	require.NoError(t, r.AdoptLedgerFrom("c", HoldsNothing, Ledger{Entries: []LedgerEntry{bare}}.Encode()))
	l, err := DecodeLedger(r.Ledger())
	require.NoError(t, err)
	require.Len(t, l.Entries, 1)
	assert.Equal(t, run, l.Entries[0])

	ended := run.ended(OutcomeOK)
	require.NoError(t, r.AdoptLedgerFrom("a", SaysNoHolds, Ledger{Entries: []LedgerEntry{ended}}.Encode()))
	l, err = DecodeLedger(r.Ledger())
	require.NoError(t, err)
	assert.Equal(t, []LedgerEntry{ended}, l.Entries)
	assert.Equal(t, byte(1), r.Ledger()[0], "nothing running: version 1")
}
