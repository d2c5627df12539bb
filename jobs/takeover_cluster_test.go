package jobs

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// takeoverCluster is the three-node cluster of the takeover tests: runners
// a, b and c of the jobs, each with a fake elector, on a heartbeatNet; b
// logs to logs. a leads the first term, b and c follow it. For tests inside
// a synctest bubble; stop it with the context's cancel, then wg.Wait.
type takeoverCluster struct {
	t     *testing.T
	specs []Spec
	exec  *fakeExec
	logs  *logSink

	a, b, c    *Runner
	ea, eb, ec *fakeElector
	net        heartbeatNet
	wg         sync.WaitGroup
}

// newTakeoverCluster is the cluster of nodes "a", "b" and "c" running spec,
// a leading term 1.
func newTakeoverCluster(ctx context.Context, t *testing.T, spec Spec) *takeoverCluster {
	return newTakeoverClusterOf(ctx, t, [3]string{"a", "b", "c"}, 1, spec)
}

// newTakeoverClusterOf is the cluster of the nodes ids (a, b, c) running
// specs, a leading term.
func newTakeoverClusterOf(ctx context.Context, t *testing.T, ids [3]string, term uint64, specs ...Spec) *takeoverCluster {
	cl := &takeoverCluster{t: t, specs: specs, exec: &fakeExec{behave: sleepFor(10*time.Minute, 0)}, logs: &logSink{}}
	cl.a, cl.b, cl.c = cl.node(ids[0], nil), cl.node(ids[1], slog.New(cl.logs)), cl.node(ids[2], nil)
	cl.ea, cl.eb, cl.ec = newFakeElector(ctx, ids[0], cl.a.Callbacks()), newFakeElector(ctx, ids[1], cl.b.Callbacks()),
		newFakeElector(ctx, ids[2], cl.c.Callbacks())
	cl.net.run(ctx, t, &cl.wg)
	cl.net.set(cl.a, cl.a, cl.b, cl.c)
	cl.ea.lead(term)
	cl.eb.follow(ids[0], term)
	cl.ec.follow(ids[0], term)
	return cl
}

// node returns a new runner of the cluster's jobs for id (a process started
// anew), logging to logger (nil: nowhere).
func (cl *takeoverCluster) node(id string, logger *slog.Logger) *Runner {
	return newTestRunnerCfg(cl.t, testConfig{Node: id, Jobs: cl.specs, Gather: 5 * time.Second,
		HoldLapse: holdLapseForTest, Logger: logger}, cl.exec)
}

// stop ends the cluster: cancel is its context's; the runners' runs are
// waited for.
func (cl *takeoverCluster) stop(cancel context.CancelFunc) {
	cancel()
	cl.wg.Wait()
	for _, r := range []*Runner{cl.a, cl.b, cl.c} {
		if err := r.Wait(context.Background()); err != nil {
			cl.t.Error(err)
		}
	}
}
