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

// trapJob runs every 10 s for 15 s, ignores SIGTERM (kill_grace 5 s) and
// is rerun when interrupted (TestClusterQuorumSuccessorWaitsForTheOldRun).
const trapJob = "traps-sigterm"

// Quorum mode: a leader cut off 1 s into a run of a job that ignores
// SIGTERM loses its lease, steps down and stops the run, which dies by
// SIGKILL kill_grace (5 s) later. The majority elects a successor once
// the lease is over; it reruns the instant (rerun_interrupted) only after
// the old run can no longer be going, and no run of the job starts on any
// node while another goes on. Without the wait it reran the instant a
// gathering window (1 s) after its takeover, beside the dying run. With
// clocks 20 % slow against the successor's (the documented bound), a
// kill_grace of 30 s takes 36 s: without counting it a fifth longer the
// successor reran the instant about 4 s before the old run died. The
// wait then outlasts the job's next instant, so the job sets a
// misfire_grace: by default an instant may start only until its next one.
func TestClusterQuorumSuccessorWaitsForTheOldRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace time.Duration
		slow  bool
	}{{"", 5 * time.Second, false}, {"slow clocks ", 30 * time.Second, true}} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprint(tc.name, seed), func(t *testing.T) {
				testSuccessorWaitsForTheOldRun(t, seed, tc.grace, tc.slow)
			})
		}
	}
}

func testSuccessorWaitsForTheOldRun(t *testing.T, seed uint64, grace time.Duration, slow bool) {
	synctest.Test(t, func(t *testing.T) {
		c := newJobClusterWith(t, 3, seed, push, []jobs.Spec{{Name: trapJob, Schedule: "*/10 * * * * *",
			Shell: "true", KillGrace: grace, RerunInterrupted: true, MisfireGrace: 5 * time.Minute}},
			func(c *jobCluster) { c.clusterSize, c.trapTerm, c.slowClocks = 3, true, slow })
		time.Sleep(3 * time.Second)
		first := c.nextStart(trapJob)
		time.Sleep(time.Second)
		lead := c.nodes[c.slot(first.node)]
		c.net.Partition([]netip.AddrPort{lead.addr})
		rerun := c.nextStart(trapJob)
		require.NotEqual(t, first.node, rerun.node)
		assert.Equal(t, first.instant, rerun.instant, "the interrupted instant is rerun")
		end := c.endOf(first)
		require.False(t, end.IsZero(), "%s's run still went on as the rerun started", first.node)
		assert.False(t, rerun.at.Before(end), "rerun at %s while %s's run went on until %s",
			rerun.at.Format("15:04:05.000"), first.node, end.Format("15:04:05.000"))
		time.Sleep(20 * time.Second)
		c.net.Heal()
		time.Sleep(5 * time.Second)
		c.stopAll()

		starts := c.allStarts()
		for i, x := range starts {
			for _, y := range starts[i+1:] {
				xEnd := c.endOf(x)
				assert.True(t, x.node == y.node || !y.at.Before(xEnd),
					"%s's run of %s (from %s to %s) and %s's of %s (from %s) overlap", x.node,
					x.instant.Format("15:04:05"), x.at.Format("15:04:05.000"), xEnd.Format("15:04:05.000"),
					y.node, y.instant.Format("15:04:05"), y.at.Format("15:04:05.000"))
			}
		}
	})
}
