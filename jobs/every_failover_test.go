package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The case, as a user met it: an @every 10s job ran on a, a died
// just before an instant, and b, elected 275 ms after the instant a would
// have run next, gathered for a second before deciding. The instants are
// the schedule's, not the leader's: b goes on with a's sequence, the gap
// instant runs once (misfire: run-once), and nothing is lost or repeated.
func TestEverySuccessorContinuesTheSameInstants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		spec := Spec{Name: "e", Schedule: "@every 10s", Shell: "x"}
		f := &fakeExec{}
		a := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{spec}, Gather: time.Second}, f)
		b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: time.Second}, f)
		ea, eb := newFakeElector(ctx, "a", a.Callbacks()), newFakeElector(ctx, "b", b.Callbacks())
		time.Sleep(3500 * time.Millisecond) // the cluster's first leader starts off the grid
		ea.lead(1)
		eb.follow("a", 1)
		time.Sleep(minute(0).Add(58 * time.Second).Sub(time.Now()))
		synctest.Wait()
		require.NoError(t, b.AdoptLedger(a.Ledger())) // a's last heartbeat
		ea.follow("", 1)                              // a dies
		time.Sleep(minute(1).Add(275 * time.Millisecond).Sub(time.Now()))
		eb.lead(2)
		time.Sleep(30 * time.Second)
		synctest.Wait()

		nodes, got := runsOf(f, "e")
		require.NotEmpty(t, got)
		t.Logf("runs: %v on %v", got, nodes)
		first, err := time.Parse(time.RFC3339, got[0])
		require.NoError(t, err)
		var want []string
		for at := first; len(want) < len(got); at = at.Add(10 * time.Second) {
			want = append(want, at.Format(time.RFC3339))
		}
		assert.Equal(t, want, got, "one run per instant, ten seconds apart, across the failover")
		assert.Equal(t, "2000-01-01T00:01:30Z", got[len(got)-1])
		cancel()
		require.NoError(t, a.Wait(context.Background()))
		require.NoError(t, b.Wait(context.Background()))
	})
}
