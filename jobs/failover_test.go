package jobs

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cluster simulates the parts of a udp cluster the runner sees: one
// elector per node and heartbeats, every second, carrying the leader's
// ledger to the live followers that can hear it.
type cluster struct {
	t      *testing.T
	exec   *fakeExec
	mu     sync.Mutex
	nodes  []*Runner
	els    []*fakeElector
	alive  []bool
	hears  [][]bool // hears[i][j]: node i receives node j's heartbeats
	leader int      // -1: none
	term   uint64
}

func newCluster(t *testing.T, ctx context.Context, n int, f *fakeExec, specs ...Spec) *cluster {
	c := &cluster{t: t, exec: f, leader: -1}
	for i := range n {
		node := string(rune('a' + i))
		r := newTestRunner(t, node, f, specs...)
		c.nodes = append(c.nodes, r)
		c.els = append(c.els, newFakeElector(ctx, node, r.Callbacks()))
		c.alive = append(c.alive, true)
		row := make([]bool, n)
		for j := range row {
			row[j] = true
		}
		c.hears = append(c.hears, row)
	}
	go c.heartbeats(ctx)
	return c
}

func (c *cluster) heartbeats(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		c.mu.Lock()
		if l := c.leader; l >= 0 {
			b := c.nodes[l].Ledger()
			for i, r := range c.nodes {
				if i != l && c.alive[i] && c.hears[i][l] {
					require.NoError(c.t, r.AdoptLedger(b))
				}
			}
		}
		c.mu.Unlock()
	}
}

// lead makes node i the leader with the next term.
func (c *cluster) lead(i int) {
	c.mu.Lock()
	c.term++
	c.leader = i
	term := c.term
	c.mu.Unlock()
	c.els[i].lead(term)
	for j, el := range c.els {
		if j != i && c.alive[j] {
			el.follow(string(rune('a'+i)), term)
		}
	}
}

// kill crashes node i: it stops leading (its runs are cancelled) and hears
// and sends nothing more.
func (c *cluster) kill(i int) {
	c.mu.Lock()
	c.alive[i] = false
	if c.leader == i {
		c.leader = -1
	}
	c.mu.Unlock()
	c.els[i].follow("", c.term)
}

func (c *cluster) wait(ctx context.Context) {
	for _, r := range c.nodes {
		require.NoError(c.t, r.Wait(ctx))
	}
}

// runs returns (node, scheduled instant) of every start of job.
func runsOf(f *fakeExec, job string) (nodes, instants []string) {
	for _, c := range f.all() {
		if c.Env["LANLEADER_JOB"] == job {
			nodes = append(nodes, c.Env["LANLEADER_NODE"])
			instants = append(instants, c.Env["LANLEADER_SCHEDULED_AT"])
		}
	}
	return
}

func minutes(from time.Time, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = from.Add(time.Duration(i+1) * time.Minute).Format(time.RFC3339)
	}
	return out
}

// A failover in the middle of a minute schedule: the old leader dies at
// hh:05:30, the new one leads a few seconds after hh:06 (the gap swallowed
// the 06 instant). With run-once every instant runs exactly once; with
// skip, 06 is missed but nothing runs twice.
func TestFailoverMidMinuteSchedule(t *testing.T) {
	tests := []struct {
		name    string
		misfire Misfire
		gap     time.Duration // from the death to the new leadership
		missing int           // instants never run
	}{
		{"run-once, gap crosses an instant", MisfireRunOnce, 35 * time.Second, 0},
		{"skip, gap crosses an instant", MisfireSkip, 35 * time.Second, 1},
		{"run-once, gap between instants", MisfireRunOnce, 20 * time.Second, 0},
		{"skip, gap between instants", MisfireSkip, 20 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				f := &fakeExec{behave: sleepFor(10*time.Second, 0)}
				spec := everyMinute("m")
				spec.Misfire = tt.misfire
				c := newCluster(t, ctx, 2, f, spec)
				start := time.Now()
				c.lead(0)
				time.Sleep(5*time.Minute + 30*time.Second)
				c.kill(0)
				time.Sleep(tt.gap)
				c.lead(1)
				time.Sleep(10*time.Minute - 5*time.Minute - 30*time.Second - tt.gap + time.Second)
				synctest.Wait()

				nodes, got := runsOf(f, "m")
				want := minutes(start, 10)
				seen := map[string]int{}
				for _, s := range got {
					seen[s]++
				}
				for s, n := range seen {
					assert.Equal(t, 1, n, "instant %s ran %d times", s, n)
				}
				missing := 0
				for _, s := range want {
					if seen[s] == 0 {
						missing++
					}
				}
				assert.Equal(t, tt.missing, missing, "runs: %v on %v", got, nodes)
				assert.Equal(t, []string{"a", "a", "a", "a", "a"}, nodes[:5])
				cancel()
				c.wait(context.Background())
			})
		})
	}
}

// The old leader dies mid-run (the ledger says "running"): the new leader
// runs that instant again only with rerun_interrupted.
func TestFailoverInterruptedRun(t *testing.T) {
	for _, rerun := range []bool{false, true} {
		t.Run(map[bool]string{false: "not rerun", true: "rerun"}[rerun], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				f := &fakeExec{behave: sleepFor(20*time.Minute, 0)}
				spec := Spec{Name: "h", Schedule: "@hourly", Shell: "backup", RerunInterrupted: rerun}
				c := newCluster(t, ctx, 2, f, spec)
				c.lead(0)
				time.Sleep(time.Hour + 5*time.Minute) // 01:00 running on a
				c.kill(0)
				time.Sleep(3 * time.Second)
				c.lead(1)
				time.Sleep(30 * time.Minute)
				synctest.Wait()

				nodes, got := runsOf(f, "h")
				at := "2000-01-01T01:00:00Z"
				if rerun {
					assert.Equal(t, []string{"a", "b"}, nodes)
					assert.Equal(t, []string{at, at}, got)
				} else {
					assert.Equal(t, []string{"a"}, nodes)
					assert.Equal(t, []string{at}, got)
				}
				e := c.nodes[1].Snapshot()[0].Ledger
				require.NotNil(t, e)
				if rerun {
					assert.Equal(t, OutcomeOK, e.Outcome, "b's rerun finished")
				} else {
					assert.Equal(t, OutcomeInterrupted, e.Outcome)
				}
				cancel()
				c.wait(context.Background())
			})
		})
	}
}

// Two successive failovers: a ran the 10-minute job's 00:10 instant and
// died; b took over and died at 00:19:50 without running the job; c, which
// only ever heard b, leads at 00:20:05 and knows from b's ledger (adopted
// from a) that 00:20 is missed, so run-once runs it, and 00:10 is not run
// again. A cold start would have waited for 00:30.
func TestLedgerSurvivesTwoFailovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{behave: sleepFor(time.Second, 0)}
		spec := Spec{Name: "ten", Schedule: "*/10 * * * *", Shell: "x"}
		c := newCluster(t, ctx, 3, f, spec)
		c.hears[2][0] = false // c never hears a
		c.lead(0)
		time.Sleep(10*time.Minute + 30*time.Second)
		c.kill(0)
		time.Sleep(2 * time.Second)
		c.lead(1)
		time.Sleep(9*time.Minute + 18*time.Second) // 00:19:50
		c.kill(1)
		time.Sleep(15 * time.Second)
		c.lead(2)
		time.Sleep(time.Minute)
		synctest.Wait()

		nodes, got := runsOf(f, "ten")
		assert.Equal(t, []string{"a", "c"}, nodes)
		assert.Equal(t, []string{"2000-01-01T00:10:00Z", "2000-01-01T00:20:00Z"}, got)
		cancel()
		c.wait(context.Background())
	})
}

// A ledger that was truncated and left a job out makes that job a cold
// start on the new leader: possibly a missed instant, never a duplicate.
func TestTruncatedLedgerNeverDuplicates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		r := newTestRunner(t, "b", f, everyMinute("m"))
		// b once led and started 00:00... no: b knows m ran at 00:01 from
		// its own earlier leadership; the new leader's truncated ledger
		// left m out.
		r.own[JobIDOf("m")] = LedgerEntry{JobID: JobIDOf("m"), Instant: time.Now().Add(time.Minute), Outcome: OutcomeOK, Term: 1}
		require.NoError(t, r.AdoptLedger(Ledger{Truncated: true}.Encode()))
		time.Sleep(3*time.Minute + 10*time.Second)
		newFakeElector(ctx, "b", r.Callbacks()).lead(5)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		assert.Empty(t, f.all(), "02 and 03 are unknown, so not run as misfires")
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"2000-01-01T00:04:00Z"}, f.scheduled("m"))
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// Misfire grace: an instant missed by more than misfire_grace is not run.
func TestMisfireGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		spec := Spec{Name: "d", Schedule: "@hourly", Shell: "x", MisfireGrace: 10 * time.Minute}
		c := newCluster(t, ctx, 2, f, spec)
		c.lead(0)
		time.Sleep(time.Hour + time.Minute) // 01:00 ran on a
		c.kill(0)
		time.Sleep(time.Hour + 15*time.Minute) // 02:00 missed by 15m > grace
		c.lead(1)
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		_, got := runsOf(f, "d")
		assert.Equal(t, []string{"2000-01-01T01:00:00Z"}, got)
		assert.Equal(t, uint64(1), c.nodes[1].Snapshot()[0].Skipped.Misfired)
		time.Sleep(time.Hour)
		synctest.Wait()
		_, got = runsOf(f, "d")
		assert.Equal(t, []string{"2000-01-01T01:00:00Z", "2000-01-01T03:00:00Z"}, got)
		cancel()
		c.wait(context.Background())
	})
}
