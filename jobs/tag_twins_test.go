package jobs

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// tagTwins returns two node ids whose udp term tags collide
// (protocol.NodeTag): a term either claims carries the other's tag too.
func tagTwins(t *testing.T) (string, string) {
	seen := map[uint16]string{}
	for i := range 1 << 17 { // more ids than tags: a collision is certain
		id := fmt.Sprintf("node-%d", i)
		if other, ok := seen[protocol.NodeTag(id)]; ok {
			return other, id
		}
		seen[protocol.NodeTag(id)] = id
	}
	t.Fatal("no two ids share a tag")
	return "", ""
}

// udpTerm is the term id claims in round, shaped as the udp elector's.
func udpTerm(id string, round uint64) uint64 {
	return protocol.MakeTerm(round, 100, protocol.NodeTag(id))
}

// ranOn returns the scheduled instants of job that node started under
// term.
func (cl *takeoverCluster) ranOn(job, node string, term uint64) []string {
	var out []string
	for _, c := range cl.exec.all() {
		if c.Env["LANLEADER_JOB"] == job && c.Env["LANLEADER_NODE"] == node && c.Env["LANLEADER_TERM"] == fmt.Sprint(term) {
			out = append(out, c.Env["LANLEADER_SCHEDULED_AT"])
		}
	}
	return out
}

// twins are the nodes of the tag twin tests, in a takeoverCluster: x and
// y, whose terms carry one tag, and g.
type twins struct {
	x, y, g    *Runner
	ex, ey, eg *fakeElector
}

// heardByYAlone plays x, leading term xt, starting instant with only y
// hearing the heartbeat that says so, then dying; g then leads term gt,
// y following. It returns 1.5 s after the instant, with g's gathering
// window open.
func (n twins) heardByYAlone(cl *takeoverCluster, instant time.Time, xt, gt uint64) {
	time.Sleep(instant.Add(-500 * time.Millisecond).Sub(time.Now()))
	cl.net.set(n.x, n.x, n.y) // g misses x's heartbeats from here on
	time.Sleep(2 * time.Second)
	cl.net.set(nil, n.y, n.g) // x dies, leading
	n.ex.follow("", xt)
	cl.net.set(n.g, n.y, n.g)
	n.eg.lead(gt)
	n.ey.follow(n.g.cfg.Node, gt)
}

// Issue 22, item 3: x and y share a term tag. x leads and starts a run;
// of the others only y hears the heartbeat that says so (x's commit
// majority was {x, y}); x dies. g, the next leader, hears of the run only
// through y, which relays it as it is: running, a run of x's, not one y
// runs. g concludes it interrupted, names x and reruns it.
func TestTagTwinRelaysTheOthersRunAsRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		x, y := tagTwins(t)
		t1, t2 := udpTerm(x, 1), udpTerm("g", 2)
		require.Equal(t, protocol.TermTag(t1), protocol.NodeTag(y), "y could have claimed x's term")
		cl := newTakeoverClusterOf(ctx, t, [3]string{x, "g", y}, t1,
			Spec{Name: "m", Schedule: "1 * * * *", Shell: "x", RerunInterrupted: true})
		n := twins{x: cl.a, ex: cl.ea, g: cl.b, eg: cl.eb, y: cl.c, ey: cl.ec}
		n.heardByYAlone(cl, minute(1), t1, t2)
		require.Equal(t, []string{minute(1).Format(time.RFC3339)}, cl.ranOn("m", x, t1), "x started 00:01")
		require.NoError(t, n.g.AdoptLedgerFrom(y, HoldsNothing, n.y.Ledger())) // y's LEDGER to the new leader
		time.Sleep(6 * time.Second)                                            // g's gathering window ends
		synctest.Wait()

		warns := cl.logs.find("jobs: previous leader's run was interrupted; running it again (rerun_interrupted)")
		require.Len(t, warns, 1, "g concluded x's run interrupted")
		assert.Equal(t, x, warns[0]["node"], "naming the node that led its term")
		assert.Equal(t, []string{minute(1).Format(time.RFC3339)}, cl.ranOn("m", "g", t2), "and reran it")
		cl.stop(cancel)
	})
}

// Issue 22, item 3, the holder's side: y led first and was deposed while
// its run of a (on_leader_loss: finish) goes on; x, whose terms carry y's
// tag, led next and started b, heard by y only, and died. y, holding, sends
// g its pool: its own run of a, which it runs, and x's run of b, which it
// only relays. g holds a as y's and concludes b interrupted at once,
// naming x, and reruns it: a relayed run is never taken for the relayer's.
func TestHolderHoldsOnlyTheRunsItRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		x, y := tagTwins(t)
		t1, t2, t3 := udpTerm(y, 1), udpTerm(x, 2), udpTerm("g", 3)
		cl := newTakeoverClusterOf(ctx, t, [3]string{y, "g", x}, t1,
			Spec{Name: "a", Schedule: "1 * * * *", Shell: "x", OnLeaderLoss: LeaderLossFinish},
			Spec{Name: "b", Schedule: "2 * * * *", Shell: "x", RerunInterrupted: true})
		n := twins{y: cl.a, ey: cl.ea, g: cl.b, eg: cl.eb, x: cl.c, ex: cl.ec}
		time.Sleep(minute(1).Add(30 * time.Second).Sub(time.Now())) // y started a at 00:01
		require.Equal(t, []string{minute(1).Format(time.RFC3339)}, cl.ranOn("a", y, t1))

		n.ey.follow(x, t2) // deposed without stopping: a goes on, and y holds it
		n.ex.lead(t2)
		n.eg.follow(x, t2)
		cl.net.set(n.x, n.x, n.y, n.g)
		cl.net.hold(n.y)
		n.heardByYAlone(cl, minute(2), t2, t3)
		require.Equal(t, []string{minute(2).Format(time.RFC3339)}, cl.ranOn("b", x, t2), "x started 00:02")
		time.Sleep(6 * time.Second) // g's gathering window ends
		synctest.Wait()

		held := cl.logs.find("jobs: previous leader's run still going on its node; overlap policy applies to it")
		require.Len(t, held, 1)
		assert.Equal(t, "a", held[0]["job"])
		assert.Equal(t, y, held[0]["node"])
		warns := cl.logs.find("jobs: previous leader's run was interrupted; running it again (rerun_interrupted)")
		require.Len(t, warns, 1, "g concluded x's run of b interrupted: y does not run it")
		assert.Equal(t, "b", warns[0]["job"])
		assert.Equal(t, x, warns[0]["node"])
		assert.Equal(t, []string{minute(2).Format(time.RFC3339)}, cl.ranOn("b", "g", t3))
		cl.stop(cancel)
	})
}
