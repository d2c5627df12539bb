package jobs

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An attempt's licence: a cancel job's process runs for Licence from
// before the guard said yes, unless renewed; a finish job's for its
// timeout, never renewed (the shim enforces the timeout); a finish job
// without a timeout and a request have none.
func TestRunLicence(t *testing.T) {
	const boot = time.Hour
	req := &HTTPRequest{URL: "https://example.org/hook"}
	for name, tc := range map[string]struct {
		spec     Spec
		deadline time.Duration // 0: none
	}{
		"process, cancel":             {Spec{}, boot + Licence},
		"process, finish, timeout":    {Spec{OnLeaderLoss: LeaderLossFinish, Timeout: time.Minute}, boot + time.Minute},
		"process, finish, no timeout": {Spec{OnLeaderLoss: LeaderLossFinish}, 0},
		"http, cancel":                {Spec{HTTP: req}, 0},
	} {
		lic := runLicence(&tc.spec, boot)
		if tc.deadline == 0 {
			assert.Nil(t, lic, name)
			continue
		}
		require.NotNil(t, lic, name)
		assert.Equal(t, tc.deadline, lic.Deadline(), name)
	}
}

// A cancel run's licence is renewed while this node may act, and not
// once it may not: the deadline stays where the last yes put it, at most
// Licence past it.
func TestRunLicenceIsRenewedOnlyWhileThisNodeMayAct(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var may atomic.Bool
		may.Store(true)
		f := &fakeExec{behave: sleepFor(time.Minute, 0)}
		r := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{{Name: "m", Schedule: "0 * * * *", Shell: "x"}},
			CanRun: may.Load}, f)
		newFakeElector(t.Context(), "a", r.Callbacks()).lead(1)
		_, err := r.Trigger("m")
		require.NoError(t, err)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		calls := f.all()
		require.Len(t, calls, 1)
		lic := calls[0].Licence
		require.NotNil(t, lic)
		assert.Greater(t, lic.Deadline(), fakeBootNow(), "renewed while it may act")
		assert.LessOrEqual(t, lic.Deadline(), fakeBootNow()+Licence)
		may.Store(false)
		last := fakeBootNow()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.LessOrEqual(t, lic.Deadline(), last+Licence, "not renewed since")
		may.Store(true)
	})
}
