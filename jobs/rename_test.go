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

// The case: a job every 10 s renamed a → b → a by reload while
// leading (static mode: no gathering window). A job is known by its name:
// b is a new job whose first instant is the next after the reload; a,
// back, continues its own ledger and runs none of the instants due while
// it was gone, so 00:01:00, which ran as b, does not run again as a. The
// log says what happened, and no failover is claimed.
func TestRenameAndBackRunsNoInstantTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		a := Spec{Name: "a", Schedule: "@every 10s", Shell: "x"}
		b := a
		b.Name = "b"
		f := &fakeExec{}
		logs := &logSink{}
		r := newTestRunnerCfg(t, testConfig{Node: "n", Jobs: []Spec{a}, Logger: slog.New(logs)}, f)
		newFakeElector(ctx, "n", r.Callbacks()).lead(1)
		time.Sleep(55 * time.Second)
		res, err := r.Update([]Spec{b})
		require.NoError(t, err)
		require.Equal(t, UpdateResult{Added: []string{"b"}, Removed: []string{"a"}}, res)
		time.Sleep(10 * time.Second)
		_, err = r.Update([]Spec{a})
		require.NoError(t, err)
		time.Sleep(20 * time.Second)
		synctest.Wait()

		var all []string
		for _, c := range f.all() {
			all = append(all, c.Env["LANLEADER_JOB"]+" "+c.Env["LANLEADER_SCHEDULED_AT"][14:])
		}
		assert.Equal(t, []string{"a 00:10Z", "a 00:20Z", "a 00:30Z", "a 00:40Z", "a 00:50Z",
			"b 01:00Z", "a 01:10Z", "a 01:20Z"}, all, "every instant once, under the name it had then")
		assert.Empty(t, logs.find("jobs: instant missed during failover; running it once now (misfire: run-once)"))
		added := logs.find("jobs: job added by reload")
		if assert.Len(t, added, 2) {
			assert.Equal(t, "b", added[0]["job"])
			assert.Equal(t, "a", added[0]["renamed_from"], "the same definition under a new name")
			assert.Equal(t, "none: a new job", added[0]["ledger"])
			assert.Equal(t, "2000-01-01 00:01:00 +0000 UTC", added[0]["first_instant"])
			assert.Equal(t, "a", added[1]["job"])
			assert.Equal(t, "b", added[1]["renamed_from"])
			assert.Equal(t, "2000-01-01 00:00:50 +0000 UTC", added[1]["ledger_instant"], "a continues its own ledger")
			assert.Equal(t, "2000-01-01 00:01:10 +0000 UTC", added[1]["first_instant"])
		}
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}
