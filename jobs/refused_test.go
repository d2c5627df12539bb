package jobs

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refusing returns a guard (CanRun) that says no from off until on, as
// the udp elector's does while a leader that woke from a short pause
// listens before it acts again, or while its quorum lease is renewed.
func refusing(off, on time.Time) func() bool {
	return func() bool {
		now := time.Now()
		return now.Before(off) || !now.Before(on)
	}
}

// An instant the guard refused while this node still leads is decided
// again when the node can act: it starts then, if no later instant came due
// first and it is within misfire_grace; otherwise it is skipped with a
// logged reason. Never dropped silently.
func TestRefusedInstantIsDecidedAgainWhenTheNodeCanAct(t *testing.T) {
	const (
		waiting = "jobs: not starting yet: this node cannot currently act as leader; trying again until it can"
		later   = "jobs: not started: this node could not act as leader before a later instant came due"
		tooLate = "jobs: not started: this node could not act as leader within misfire_grace"
	)
	for _, tc := range []struct {
		name    string
		on      time.Duration // after 00:01 the guard says yes again
		grace   time.Duration
		want    []string
		refused uint64
		skipLog string
	}{
		{"a short pause", 450 * time.Millisecond, 0, []string{"2000-01-01T00:01:00Z", "2000-01-01T00:02:00Z"}, 0, ""},
		{"past the next instant", time.Minute + 300*time.Millisecond, 0, []string{"2000-01-01T00:02:00Z"}, 1, later},
		{"past misfire_grace", 20 * time.Second, 10 * time.Second, []string{"2000-01-01T00:02:00Z"}, 1, tooLate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				spec := everyMinute("m")
				spec.MisfireGrace = tc.grace
				f := &fakeExec{}
				logs := &logSink{}
				r := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{spec}, Logger: slog.New(logs),
					CanRun: refusing(minute(1).Add(-time.Second), minute(1).Add(tc.on))}, f)
				newFakeElector(ctx, "a", r.Callbacks()).lead(1)
				time.Sleep(2*time.Minute + time.Second)
				synctest.Wait()

				assert.Equal(t, tc.want, f.scheduled("m"))
				if calls := f.all(); tc.refused == 0 && assert.NotEmpty(t, calls) {
					late := calls[0].At.Sub(minute(1))
					assert.True(t, late >= tc.on && late < tc.on+time.Second, "started as the guard allowed it, %s late", late)
				}
				s := r.Snapshot()[0].Skipped
				assert.Equal(t, tc.refused, s.Refused)
				assert.Zero(t, s.Misfired)
				if w := logs.find(waiting); assert.NotEmpty(t, w) {
					assert.Equal(t, "2000-01-01 00:01:00 +0000 UTC", w[0]["scheduled_at"])
					for _, l := range w[1:] {
						assert.NotEqual(t, w[0]["scheduled_at"], l["scheduled_at"], "the refusal of an instant is logged once")
					}
				}
				if tc.skipLog != "" {
					if l := logs.find(tc.skipLog); assert.Len(t, l, 1) {
						assert.Equal(t, "2000-01-01 00:01:00 +0000 UTC", l[0]["scheduled_at"])
					}
				}
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

// The pause: a refuses 00:00:10 (it woke from a pause), stops
// leading 170 ms later and leads again (term 2) 280 ms after that, with a
// one-second gathering window. The instant is decided by that takeover:
// for a job every minute it runs when the window ends (misfire: run-once);
// for a job every second the next instant has started meanwhile, so it is
// skipped as overtaken, with a logged reason. a's own log says the
// instant was left to the next leader.
func TestRefusedInstantIsDecidedByTheNextLeadership(t *testing.T) {
	const (
		left      = "jobs: leadership ended before this instant could start; the next leader decides it"
		overtaken = "jobs: instants missed during failover; overtaken by a later instant already started"
	)
	for _, tc := range []struct {
		name     string
		schedule string
		want     string // the first run at or after 00:00:10
		misfired uint64
	}{
		{"every ten seconds", "*/10 * * * * *", "2000-01-01T00:00:10Z", 0},
		{"every second", "* * * * * *", "2000-01-01T00:00:11Z", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				spec := Spec{Name: "m", Schedule: tc.schedule, Shell: "x"}
				f := &fakeExec{}
				logs := &logSink{}
				instant := minute(0).Add(10 * time.Second)
				a := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{spec}, Logger: slog.New(logs),
					Gather: time.Second, CanRun: refusing(instant.Add(-100*time.Millisecond), instant.Add(450*time.Millisecond))}, f)
				el := newFakeElector(ctx, "a", a.Callbacks())
				el.lead(1)
				time.Sleep(instant.Add(170 * time.Millisecond).Sub(time.Now()))
				el.follow("", 1)
				time.Sleep(280 * time.Millisecond)
				el.lead(2)
				time.Sleep(3 * time.Second)
				synctest.Wait()

				var after []string
				for _, s := range f.scheduled("m") {
					if s >= "2000-01-01T00:00:10Z" {
						after = append(after, s)
					}
				}
				if assert.NotEmpty(t, after) {
					assert.Equal(t, tc.want, after[0])
				}
				if l := logs.find(left); assert.Len(t, l, 1) {
					assert.Equal(t, "2000-01-01 00:00:10 +0000 UTC", l[0]["scheduled_at"])
				}
				s := a.Snapshot()[0].Skipped
				assert.Equal(t, tc.misfired, s.Misfired)
				assert.Equal(t, uint64(1), s.Refused, "counted where it was refused")
				assert.Len(t, logs.find(overtaken), int(tc.misfired))
				cancel()
				require.NoError(t, a.Wait(context.Background()))
			})
		})
	}
}
