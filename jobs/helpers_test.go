package jobs

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/proc"
)

// call is one attempt seen by the fake executor.
type call struct {
	Argv    []string
	Env     map[string]string
	At      time.Time
	Licence *proc.Licence
}

// fakeExec replaces process execution so scheduling tests run entirely in
// a synctest bubble. behave decides each attempt's result; it may block on
// ctx or on fake time.
type fakeExec struct {
	mu     sync.Mutex
	calls  []call
	behave func(ctx context.Context, c call) proc.Result
}

func (f *fakeExec) run(ctx context.Context, s proc.Spec) proc.Result {
	c := call{Argv: s.Argv, Env: envMap(s.Env), At: time.Now(), Licence: s.Licence}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	pid := 1000 + len(f.calls)
	f.mu.Unlock()
	if s.OnStart != nil {
		s.OnStart(pid)
	}
	if f.behave == nil {
		return proc.Result{Started: c.At}
	}
	return f.behave(ctx, c)
}

func (f *fakeExec) all() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// scheduled returns LANLEADER_SCHEDULED_AT of every call of job.
func (f *fakeExec) scheduled(job string) []string {
	var out []string
	for _, c := range f.all() {
		if c.Env["LANLEADER_JOB"] == job {
			out = append(out, c.Env["LANLEADER_SCHEDULED_AT"])
		}
	}
	return out
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// blockUntilCancel behaves like a long job that only ends when stopped.
func blockUntilCancel(ctx context.Context, c call) proc.Result {
	<-ctx.Done()
	return proc.Result{Started: c.At, Stopped: true, ExitCode: -1, Signal: 15}
}

// sleepFor behaves like a job that takes d (fake time) unless stopped.
func sleepFor(d time.Duration, code int) func(context.Context, call) proc.Result {
	return func(ctx context.Context, c call) proc.Result {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return proc.Result{Started: c.At, Stopped: true, ExitCode: -1, Signal: 15}
		case <-t.C:
			return proc.Result{Started: c.At, ExitCode: code}
		}
	}
}

// newTestRunner builds a Runner over specs with the fake executor.
func newTestRunner(t *testing.T, node string, f *fakeExec, specs ...Spec) *Runner {
	return newTestRunnerCfg(t, testConfig{Node: node, Jobs: specs}, f)
}

// testConfig is a RunnerConfig and the parts of the Runner's fake Cluster
// (testCluster) a test sets, in one literal.
type testConfig struct {
	// RunnerConfig's fields.
	Jobs          []Spec
	Services      []ServiceSpec
	OnServiceExit func(ServiceExit)
	Node          string
	Logger        *slog.Logger
	KillGrace     time.Duration
	OnRunFinished func(RunRecord)
	Environ       []string
	HistorySize   int
	// The Cluster's parts: nil and zero for "may always act", "nothing
	// to commit", no window, no hold, no succession bound.
	CanRun         func() bool
	Gate           gateFunc
	OnLedgerChange func()
	OnHolding      func(bool)
	Gather         time.Duration
	HoldLapse      time.Duration
	Succession     election.Succession
}

// split returns the RunnerConfig and the Cluster c describes.
func (c testConfig) split() (RunnerConfig, Cluster) {
	return RunnerConfig{Jobs: c.Jobs, Services: c.Services, OnServiceExit: c.OnServiceExit, Node: c.Node,
			Logger: c.Logger, KillGrace: c.KillGrace, OnRunFinished: c.OnRunFinished, Environ: c.Environ,
			HistorySize: c.HistorySize},
		testCluster{mayAct: c.CanRun, gate: c.Gate, publish: c.OnLedgerChange, holding: c.OnHolding,
			timing: ClusterTiming{Gather: c.Gather, HoldLapse: c.HoldLapse, Succession: c.Succession}}
}

// gateFunc is a fake Cluster's Commit.
type gateFunc func(ctx context.Context, name string, e LedgerEntry) error

// testCluster is a Cluster of functions; nil ones do nothing (mayAct:
// always).
type testCluster struct {
	mayAct  func() bool
	gate    gateFunc
	publish func()
	holding func(bool)
	timing  ClusterTiming
}

func (c testCluster) MayAct() bool { return c.mayAct == nil || c.mayAct() }

func (c testCluster) Commit(ctx context.Context, name string, e LedgerEntry) error {
	if c.gate == nil {
		return nil
	}
	return c.gate(ctx, name, e)
}

func (c testCluster) Publish() {
	if c.publish != nil {
		c.publish()
	}
}

func (c testCluster) SetHolding(on bool) {
	if c.holding != nil {
		c.holding(on)
	}
}

func (c testCluster) Timing() ClusterTiming { return c.timing }

func newTestRunnerCfg(t *testing.T, tc testConfig, f *fakeExec) *Runner {
	t.Helper()
	if tc.Environ == nil {
		tc.Environ = []string{"BASE=1"}
	}
	cfg, cl := tc.split()
	r, err := NewRunner(cl, cfg)
	require.NoError(t, err)
	if f != nil {
		r.exec = f.run
	}
	r.bootNow = fakeBootNow
	return r
}

// fakeBootNow is a licence's clock as tests read it: inside a synctest
// bubble, its fake clock.
func fakeBootNow() time.Duration { return time.Duration(time.Now().UnixNano()) }

// expired reports whether lic, if any, has run out at fakeBootNow: what a
// fake process reads where a real one's shim would stop it.
func expired(lic *proc.Licence) bool { return lic != nil && fakeBootNow() > lic.Deadline() }

// startRun starts j's run of instant under term at once, as step does
// with a start that passed every check: for tests of what a run does.
func startRun(t *testing.T, r *Runner, j *job, instant time.Time, term uint64) {
	t.Helper()
	r.mu.Lock()
	rec := r.startLocked(j, j.spec, instant, term)
	ctx := r.runningLocked(t.Context(), j, &rec)
	r.unlock()
	go r.run(ctx, j, j.spec, rec)
}

// fakeElector drives a Runner's callbacks through the real Notifier, so the
// ordering is exactly what every Elector delivers.
type fakeElector struct {
	n    *election.Notifier
	node string
}

func newFakeElector(ctx context.Context, node string, cb election.Callbacks) *fakeElector {
	return &fakeElector{n: election.NewNotifier(ctx, cb, election.Status{Node: node}), node: node}
}

func (e *fakeElector) lead(term uint64) {
	e.n.Update(election.Status{Node: e.node, Role: election.Leader, Term: term,
		Leader: election.LeaderInfo{ID: e.node, Term: term}})
}

func (e *fakeElector) follow(leader string, term uint64) {
	e.n.Update(election.Status{Node: e.node, Role: election.Follower, Term: term,
		Leader: election.LeaderInfo{ID: leader, Term: term}})
}

// logSink is a slog handler that keeps records, for assertions on output.
type logSink struct {
	mu      sync.Mutex
	records []map[string]string
	watch   func(map[string]string)
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) WithGroup(string) slog.Handler            { return s }
func (s *logSink) WithAttrs(as []slog.Attr) slog.Handler {
	return &attrHandler{sink: s, attrs: as}
}
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	return (&attrHandler{sink: s}).Handle(context.Background(), r)
}

type attrHandler struct {
	sink  *logSink
	attrs []slog.Attr
}

func (h *attrHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *attrHandler) WithGroup(string) slog.Handler            { return h }
func (h *attrHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &attrHandler{sink: h.sink, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}
func (h *attrHandler) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message, "level": r.Level.String()}
	for _, a := range h.attrs {
		m[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	h.sink.mu.Lock()
	h.sink.records = append(h.sink.records, m)
	w := h.sink.watch
	h.sink.mu.Unlock()
	if w != nil {
		w(m)
	}
	return nil
}

func (s *logSink) find(msg string) []map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]string
	for _, r := range s.records {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// records collects OnRunFinished calls.
type records struct {
	mu   sync.Mutex
	recs []RunRecord
}

func (r *records) add(rec RunRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
}

func (r *records) all() []RunRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RunRecord(nil), r.recs...)
}

// defaultStop is the stop bound the entry of a process run of a cancel
// job with the default kill grace carries.
var defaultStop = stopWithin(cancelStop(DefaultKillGrace))
