package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A power cut: every node stops at once and starts again from its state
// file (its ledger as the CLI saves it before each start: StateLedger). No
// instant that started before runs again; the latest instant that fell into
// the outage runs once (within misfire_grace); without the saved ledger the
// new leader would have started cold and missed it.
func TestPowerCutRestoresTheLedger(t *testing.T) {
	for _, saved := range []bool{true, false} {
		t.Run(map[bool]string{true: "state file", false: "no state file"}[saved], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{behave: sleepFor(5*time.Second, 0)}
				spec := everyMinute("m")
				ctx, cancel := context.WithCancel(t.Context())
				a := newTestRunner(t, "a", f, spec)
				newFakeElector(ctx, "a", a.Callbacks()).lead(1)
				time.Sleep(2*time.Minute + 30*time.Second) // 00:01, 00:02 ran
				disk := a.StateLedger()
				cancel() // power cut
				require.NoError(t, a.Wait(context.Background()))

				time.Sleep(80 * time.Second) // 00:03 falls into the outage; back at 00:03:50
				ctx, cancel = context.WithCancel(t.Context())
				defer cancel()
				b := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: time.Second}, f)
				if saved {
					require.NoError(t, b.AdoptLedger(disk))
				}
				newFakeElector(ctx, "b", b.Callbacks()).lead(2)
				time.Sleep(30 * time.Second)
				synctest.Wait()
				want := []string{"2000-01-01T00:01:00Z", "2000-01-01T00:02:00Z"}
				if saved {
					want = append(want, "2000-01-01T00:03:00Z") // run once, 1 s after the takeover
				}
				want = append(want, "2000-01-01T00:04:00Z")
				assert.Equal(t, want, f.scheduled("m"))
				cancel()
				require.NoError(t, b.Wait(context.Background()))
			})
		})
	}
}
