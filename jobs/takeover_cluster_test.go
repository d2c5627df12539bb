package jobs

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// takeoverCluster is the three-node cluster of the takeover tests: runners
// a, b and c of one job, each with a fake elector, on a heartbeatNet; b
// logs to logs. a leads term 1, b and c follow it. For tests inside a
// synctest bubble; stop it with the context's cancel, then wg.Wait.
type takeoverCluster struct {
	t    *testing.T
	spec Spec
	exec *fakeExec
	logs *logSink

	a, b, c    *Runner
	ea, eb, ec *fakeElector
	net        heartbeatNet
	wg         sync.WaitGroup
}

func newTakeoverCluster(ctx context.Context, t *testing.T, spec Spec) *takeoverCluster {
	cl := &takeoverCluster{t: t, spec: spec, exec: &fakeExec{behave: sleepFor(10*time.Minute, 0)}, logs: &logSink{}}
	cl.a, cl.b, cl.c = cl.node("a", nil), cl.node("b", slog.New(cl.logs)), cl.node("c", nil)
	cl.ea, cl.eb, cl.ec = newFakeElector(ctx, "a", cl.a.Callbacks()), newFakeElector(ctx, "b", cl.b.Callbacks()),
		newFakeElector(ctx, "c", cl.c.Callbacks())
	cl.net.run(ctx, t, &cl.wg)
	cl.net.set(cl.a, cl.a, cl.b, cl.c)
	cl.ea.lead(1)
	cl.eb.follow("a", 1)
	cl.ec.follow("a", 1)
	return cl
}

// node returns a new runner of the cluster's job for id (a process started
// anew), logging to logger (nil: nowhere).
func (cl *takeoverCluster) node(id string, logger *slog.Logger) *Runner {
	return newTestRunnerCfg(cl.t, RunnerConfig{Node: id, Jobs: []Spec{cl.spec}, Gather: 5 * time.Second,
		HoldLapse: holdLapseForTest, LedBy: ledByParity, Logger: logger}, cl.exec)
}
