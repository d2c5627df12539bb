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

// Issue 25 item 4: an instant missed because the whole cluster was off runs
// once when it is back, until the job's next instant (the default
// misfire_grace, as systemd's Persistent=true and anacron): every node is
// stopped before a daily 02:00 instant and started again after it, from its
// state file's ledger. An explicit misfire_grace keeps its meaning, a
// per-minute job runs only its latest missed instant, and an instant
// overtaken by a later missed one is skipped with a logged reason. Without
// state files the cluster comes back cold: it knows of no missed instant,
// and says where the schedule starts.
func TestMissedWhileTheClusterWasOffRunsOnceUntilTheNextInstant(t *testing.T) {
	daily := Spec{Name: "backup", Schedule: "0 2 * * *", Shell: "backup"}
	dailyGrace := daily
	dailyGrace.MisfireGrace = 5 * time.Minute
	minutely := everyMinute("backup")
	day := 24 * time.Hour
	tests := []struct {
		name string
		spec Spec
		// off and on are when every node stops and starts again, from the
		// start of the test (2000-01-01 00:00 UTC).
		off, on time.Duration
		want    []string
		skipLog string // a WARN the new leader logs, if any
		from    string // its first skipped instant
		noState bool   // the nodes restart without their state files
	}{
		{"daily, back 10 minutes after the instant", daily, day + 118*time.Minute, day + 130*time.Minute,
			[]string{"2000-01-01T02:00:00Z", "2000-01-02T02:00:00Z"}, "", "", false},
		{"daily, back 10 hours after the instant", daily, day + 118*time.Minute, day + 12*time.Hour,
			[]string{"2000-01-01T02:00:00Z", "2000-01-02T02:00:00Z"}, "", "", false},
		{"daily, back after the next instant", daily, day + 118*time.Minute, 2*day + 130*time.Minute,
			[]string{"2000-01-01T02:00:00Z", "2000-01-03T02:00:00Z"},
			"jobs: instants overtaken by a later one; skipped", "2000-01-02T02:00:00Z", false},
		{"daily, explicit misfire_grace", dailyGrace, day + 118*time.Minute, day + 130*time.Minute,
			[]string{"2000-01-01T02:00:00Z"},
			"jobs: instant missed during failover; too late to run (misfire_grace)", "", false},
		{"daily, no state dir", daily, day + 118*time.Minute, day + 130*time.Minute,
			[]string{"2000-01-01T02:00:00Z"}, "jobs: no run of this job known in the cluster; its schedule starts at the takeover", "", true},
		{"per minute, off for ten minutes", minutely, 150 * time.Second, 750 * time.Second,
			[]string{"2000-01-01T00:01:00Z", "2000-01-01T00:02:00Z", "2000-01-01T00:12:00Z"},
			"jobs: instants overtaken by a later one; skipped", "2000-01-01T00:03:00Z", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				f := &fakeExec{behave: sleepFor(time.Second, 0)}
				ctx, cancel := context.WithCancel(t.Context())
				a := newTestRunner(t, "a", f, tt.spec)
				newFakeElector(ctx, "a", a.Callbacks()).lead(1)
				time.Sleep(time.Until(start.Add(tt.off)))
				disk := a.StateLedger() // what the state file holds
				cancel()                // every node stops
				require.NoError(t, a.Wait(context.Background()))

				time.Sleep(time.Until(start.Add(tt.on)))
				var logs logSink
				ctx, cancel = context.WithCancel(t.Context())
				defer cancel()
				b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{tt.spec}, Gather: time.Second,
					Logger: slog.New(&logs)}, f)
				if !tt.noState {
					require.NoError(t, b.AdoptLedger(disk))
				}
				newFakeElector(ctx, "b", b.Callbacks()).lead(2)
				time.Sleep(10 * time.Second)
				synctest.Wait()
				assert.Equal(t, tt.want, f.scheduled(tt.spec.Name))
				if tt.skipLog != "" {
					ls := logs.find(tt.skipLog)
					require.Len(t, ls, 1, "the skipped instant is logged with its reason")
					if tt.from != "" {
						from, err := time.Parse(time.RFC3339, tt.from)
						require.NoError(t, err)
						assert.Equal(t, from.String(), ls[0]["from"])
					}
				}
				cancel()
				require.NoError(t, b.Wait(context.Background()))
			})
		})
	}
}
