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

// otherJob runs every 10 s at second 5, for a minute, and finishes on
// leadership loss (TestClusterRestartedHolderHoldsOnlyItsOwnRun).
const otherJob = "long"

// leaderSlot returns the slot of a running node that leads, or -1.
func (c *jobCluster) leaderSlot() int {
	for i, nd := range c.nodes {
		if nd != nil && nd.el.Status().IsLeader() {
			return i
		}
	}
	return -1
}

// leadBy crashes and restarts the leader until slot i leads (the best
// ranked node claims first when a leader goes silent).
func (c *jobCluster) leadBy(i int) {
	for range 6 {
		c.awaitLeader()
		time.Sleep(2 * time.Second) // settled
		l := c.leaderSlot()
		if l == i {
			return
		}
		require.GreaterOrEqual(c.t, l, 0)
		c.stop(l, true)
		c.start(l)
	}
	c.t.Fatalf("n%d never led", i+1)
}

// A leader triggers a manual run and crashes: nobody holds that run, so
// the next leader's takeover concludes it (interrupted, in every pool and
// in its history, naming the node). The node restarts (a new process),
// leads again, starts a run of another job and is deposed with it going
// (cut off, healed after the others elected). Its marked ledger names that
// run, which the new leader holds (no overlap), and not the manual run its
// previous process started: the manual run's job goes on running on the
// new leader instead of being skipped for the minute the other run takes.
func TestClusterRestartedHolderHoldsOnlyItsOwnRun(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				finish := func(name, sched string) jobs.Spec {
					return jobs.Spec{Name: name, Schedule: sched, Shell: "true",
						OnLeaderLoss: jobs.LeaderLossFinish, Overlap: jobs.OverlapSkip}
				}
				c := newJobClusterOf(t, 3, seed, push, []jobs.Spec{
					finish(holdJob, "*/10 * * * * *"), finish(otherJob, "5-59/10 * * * * *")})
				const top = 2 // n3, the best ranked
				c.leadBy(top)
				var err error
				for range 30 { // between its scheduled runs
					if _, err = c.nodes[top].runner.Trigger(holdJob); err == nil {
						break
					}
					time.Sleep(time.Second)
				}
				require.NoError(t, err)
				time.Sleep(100 * time.Millisecond)
				c.stop(top, true)
				c.start(top)
				time.Sleep(3 * time.Second)
				l := c.leaderSlot()
				require.GreaterOrEqual(t, l, 0)
				for _, nd := range c.nodes {
					pool, err := jobs.DecodeLedger(nd.runner.Ledger())
					require.NoError(t, err)
					var manual []jobs.Outcome
					for _, e := range pool.Entries {
						if e.JobID == jobs.ManualJobIDOf(holdJob) {
							manual = append(manual, e.Outcome)
						}
					}
					assert.Equal(t, []jobs.Outcome{jobs.OutcomeInterrupted}, manual,
						"%s: the manual run of n3's previous process, concluded by the takeover", nd.id)
				}
				var concluded []jobs.RunRecord
				for _, rec := range c.nodes[l].runner.History().Runs(holdJob, 0) {
					if rec.Manual {
						concluded = append(concluded, rec)
					}
				}
				require.Len(t, concluded, 1)
				assert.Equal(t, jobs.OutcomeInterrupted, concluded[0].Outcome)
				assert.Equal(t, "n3", concluded[0].Node)

				c.leadBy(top)
				held := c.nextStart(otherJob)
				require.Equal(t, "n3", held.node)
				n3 := c.nodes[top]
				c.net.Partition([]netip.AddrPort{n3.addr})
				time.Sleep(4 * time.Second) // the others elect; n3's next holdJob instant is after the heal
				c.net.Heal()
				healed := time.Now()
				time.Sleep(30 * time.Second)
				require.False(t, n3.el.Status().IsLeader(), "deposed by the heal")
				end := time.Now()
				c.stopAll()

				var others []string
				for _, st := range c.allStarts() {
					if st.node == "n3" || !st.at.After(healed) || st.at.After(end) {
						continue
					}
					switch st.job {
					case holdJob:
						others = append(others, st.instant.Format("15:04:05"))
					case otherJob:
						assert.False(t, st.at.Before(held.at.Add(runTime[otherJob])),
							"%s started on %s while n3's run of %s went on", st.instant.Format("15:04:05"), st.node,
							held.instant.Format("15:04:05"))
					}
				}
				assert.NotEmpty(t, others, "%s runs on the new leader while n3 runs %s", holdJob, otherJob)
			})
		})
	}
}
