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

// The nemesis's case: a (term 1) ran 00:00:18 of a job every second and
// lost its quorum; b leads from 00:00:20.571 (term 2, a one-second
// gathering window) and runs 00:00:21 inside it; a follower relays b's own
// ledger back before the window ends, so b's pool holds b's run where it
// held a's (heard before the takeover, or in the window). When the window
// ends, 00:00:19 and 00:00:20, overtaken by 00:00:21, are skipped with
// that reason logged, not silently.
func TestGapOvertakenInTheWindowIsLoggedAfterARelay(t *testing.T) {
	for _, heard := range []time.Duration{18*time.Second + 300*time.Millisecond, 20*time.Second + 800*time.Millisecond} {
		t.Run(heard.String(), func(t *testing.T) { gapOvertakenAfterARelay(t, heard) })
	}
}

func gapOvertakenAfterARelay(t *testing.T, heard time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		logs := &logSink{}
		spec := Spec{Name: "tick", Schedule: "* * * * * *", Shell: "x"}
		f := &fakeExec{}
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: time.Second,
			Logger: slog.New(logs)}, f)
		a := func() {
			require.NoError(t, b.AdoptLedgerFrom("a", false, ledgerOf("tick", minute(0).Add(18*time.Second), OutcomeOK, 1)))
		}
		takeover := 20*time.Second + 571*time.Millisecond
		if heard < takeover {
			time.Sleep(heard)
			a()
		}
		time.Sleep(minute(0).Add(takeover).Sub(time.Now()))
		newFakeElector(ctx, "b", b.Callbacks()).lead(2)
		if heard > takeover {
			time.Sleep(minute(0).Add(heard).Sub(time.Now()))
			a()
		}
		time.Sleep(minute(0).Add(21*time.Second + 300*time.Millisecond).Sub(time.Now()))
		require.NoError(t, b.AdoptLedgerFrom("c", false, b.Ledger())) // c relays b's pool back
		time.Sleep(2 * time.Second)
		synctest.Wait()

		assert.Equal(t, []string{"2000-01-01T00:00:21Z", "2000-01-01T00:00:22Z", "2000-01-01T00:00:23Z"}, f.scheduled("tick"))
		if l := logs.find("jobs: instants missed during failover; overtaken by a later instant already started"); assert.Len(t, l, 1) {
			assert.Equal(t, "2000-01-01 00:00:20 +0000 UTC", l[0]["scheduled_at"])
			assert.Equal(t, "2", l[0]["count"])
		}
		assert.Equal(t, uint64(2), b.Snapshot()[0].Skipped.Misfired)
		cancel()
		require.NoError(t, b.Wait(context.Background()))
	})
}
