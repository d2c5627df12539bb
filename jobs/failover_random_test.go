package jobs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// randCluster is a cluster whose nodes crash and restart with empty memory;
// the leader's ledger reaches live followers on every 1 s heartbeat and at
// once when it changes (as an elector that heartbeats on ledger change
// would).
type randCluster struct {
	t      *testing.T
	ctx    context.Context
	exec   *fakeExec
	specs  []Spec
	mu     sync.Mutex
	nodes  []*Runner
	els    []*fakeElector
	alive  []bool
	leader int
	term   uint64
	kick   chan struct{}
	dead   []*Runner // crashed runners, to Wait on at the end
}

func newRandCluster(t *testing.T, ctx context.Context, n int, f *fakeExec, specs ...Spec) *randCluster {
	c := &randCluster{t: t, ctx: ctx, exec: f, specs: specs, leader: -1, kick: make(chan struct{}, 1)}
	c.nodes = make([]*Runner, n)
	c.els = make([]*fakeElector, n)
	c.alive = make([]bool, n)
	for i := range n {
		c.start(i)
	}
	go c.heartbeats()
	return c
}

// start (re)starts node i with empty memory.
func (c *randCluster) start(i int) {
	node := fmt.Sprintf("n%d", i)
	r := newTestRunnerCfg(c.t, testConfig{Node: node, Jobs: c.specs, OnLedgerChange: func() {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}}, c.exec)
	c.mu.Lock()
	c.nodes[i], c.alive[i] = r, true
	c.mu.Unlock()
	c.els[i] = newFakeElector(c.ctx, node, r.Callbacks())
}

func (c *randCluster) heartbeats() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(time.Second):
		case <-c.kick:
		}
		c.mu.Lock()
		if l := c.leader; l >= 0 {
			b := c.nodes[l].Ledger()
			for i, r := range c.nodes {
				if i != l && c.alive[i] {
					require.NoError(c.t, r.AdoptLedger(b))
				}
			}
		}
		c.mu.Unlock()
	}
}

func (c *randCluster) lead(i int) {
	c.mu.Lock()
	c.term++
	c.leader = i
	term := c.term
	c.mu.Unlock()
	c.els[i].lead(term)
}

// crash kills node i: leadership ends, memory is lost, it hears nothing.
func (c *randCluster) crash(i int) {
	c.mu.Lock()
	c.alive[i] = false
	if c.leader == i {
		c.leader = -1
	}
	c.dead = append(c.dead, c.nodes[i])
	c.mu.Unlock()
	c.els[i].follow("", c.term)
}

// Random crash/restart failovers on a minute schedule (run-once, gaps
// shorter than a minute) and a 7 s schedule: never a duplicate instant, and
// no minute instant missed.
func TestFailoverRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 0))
				ctx, cancel := context.WithCancel(t.Context())
				f := &fakeExec{behave: sleepFor(time.Duration(rng.IntN(10))*time.Second, 0)} // ends before the next minute even when run late
				c := newRandCluster(t, ctx, 3, f, everyMinute("minute"),
					Spec{Name: "fast", Schedule: "@every 7s", Shell: "x"})
				start := time.Now()
				leader := 0
				c.lead(leader)
				for range 8 {
					// Never exactly on an instant: a crash in the same instant as
					// a start, before any heartbeat, is the documented window
					// in which a new leader cannot know the start happened.
					time.Sleep(time.Duration(20000+rng.IntN(300000)) * time.Millisecond)
					if time.Now().Nanosecond() == 0 {
						time.Sleep(time.Duration(1+rng.IntN(999)) * time.Millisecond)
					}
					t.Logf("%s crash n%d", time.Now().Format("15:04:05.000"), leader)
					c.crash(leader)
					time.Sleep(time.Duration(rng.IntN(45000)) * time.Millisecond) // the gap
					next := (leader + 1 + rng.IntN(2)) % 3
					c.start(leader) // the crashed node restarts, empty
					t.Logf("%s restart n%d", time.Now().Format("15:04:05.000"), leader)
					time.Sleep(time.Duration(rng.IntN(3)) * time.Second)
					leader = next
					t.Logf("%s lead n%d", time.Now().Format("15:04:05.000"), leader)
					c.lead(leader)
				}
				time.Sleep(time.Duration(20+rng.IntN(100)) * time.Second)
				end := time.Now()
				cancel()
				synctest.Wait()

				for _, job := range []string{"minute", "fast"} {
					nodes, got := runsOf(f, job)
					seen := map[string]string{}
					for k, s := range got {
						if prev, dup := seen[s]; dup {
							t.Fatalf("seed %d: %s instant %s ran on %s and %s", seed, job, s, prev, nodes[k])
						}
						seen[s] = nodes[k]
					}
					if job != "minute" {
						continue
					}
					for m := start.Truncate(time.Minute).Add(time.Minute); m.Before(end.Add(-time.Minute)); m = m.Add(time.Minute) {
						if _, ok := seen[m.Format(time.RFC3339)]; !ok {
							t.Fatalf("seed %d: minute instant %s never ran (runs: %v)", seed, m.Format(time.RFC3339), got)
						}
					}
				}
				for _, r := range append(c.dead, c.nodes...) {
					require.NoError(t, r.Wait(context.Background()))
				}
			})
		})
	}
}
