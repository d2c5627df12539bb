package jobs_test

import (
	"fmt"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/jobs"
)

// Quorum mode, a leader-only service whose copies ignore SIGTERM (they die
// by SIGKILL stop_grace later): the leader is cut off, later its successor
// crashes, and a third leadership starts; no two copies ever run at once,
// and each successor's copy starts once the previous copy is gone (or can
// no longer be running), not before. Without the wait (startAtLocked
// starting at once) a successor started its copy a gathering window after
// its takeover, beside the dying one. With clocks 20 % slow against the
// successor's and a stop_grace of 30 s (36 s then), without counting the
// old copy's stop bound a fifth longer it started its copy beside it.
func TestClusterQuorumServiceNeverTwoCopies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace time.Duration
		slow  bool
	}{{"", 5 * time.Second, false}, {"slow clocks ", 30 * time.Second, true}} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprint(tc.name, seed), func(t *testing.T) {
				testServiceNeverTwoCopies(t, seed, tc.grace, tc.slow)
			})
		}
	}
}

func testServiceNeverTwoCopies(t *testing.T, seed uint64, grace time.Duration, slow bool) {
	svc := jobs.ServiceSpec{Name: "scheduler", Command: []string{"scheduler"}, StopGrace: grace}
	name := jobs.ServiceLedgerName(svc.Name)
	synctest.Test(t, func(t *testing.T) {
		c := newJobClusterWith(t, 3, seed, push, []jobs.Spec{}, func(c *jobCluster) {
			c.clusterSize, c.trapTerm, c.slowClocks, c.services = 3, true, slow, []jobs.ServiceSpec{svc}
		})
		first := c.nextStart(name)
		time.Sleep(10 * time.Second)
		lead := c.nodes[c.slot(first.node)]
		cut := time.Now()
		c.net.Partition([]netip.AddrPort{lead.addr})
		second := c.nextStart(name)
		require.NotEqual(t, first.node, second.node)
		end := c.endOf(first)
		require.False(t, end.IsZero(), "%s's copy still ran as %s's started", first.node, second.node)
		assert.False(t, second.at.Before(end), "%s's copy started at %s, %s's ran until %s (cut at %s)", second.node,
			second.at.Format("15:04:05.000"), first.node, end.Format("15:04:05.000"), cut.Format("15:04:05.000"))
		time.Sleep(10 * time.Second)
		c.net.Heal()
		time.Sleep(10 * time.Second)
		c.stop(c.slot(second.node), true) // a crash: its copy dies with it, unheard
		third := c.nextStart(name)
		assert.NotEqual(t, second.node, third.node)
		time.Sleep(10 * time.Second)
		c.stopAll()

		starts := c.allStarts()
		require.GreaterOrEqual(t, len(starts), 3)
		for i, x := range starts {
			xEnd := c.endOf(x)
			require.False(t, xEnd.IsZero(), "every copy stopped by the end")
			for _, y := range starts[i+1:] {
				assert.True(t, !y.at.Before(xEnd) || !x.at.Before(c.endOf(y)),
					"%s's copy (%s to %s) and %s's (%s to %s) overlap", x.node, x.at.Format("15:04:05.000"),
					xEnd.Format("15:04:05.000"), y.node, y.at.Format("15:04:05.000"), c.endOf(y).Format("15:04:05.000"))
			}
		}
	})
}
