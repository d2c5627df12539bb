package jobs

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/proc"
)

// copies records a service's copies as the fake executor runs them: when
// each started and ended (fake time), and its environment.
type copies struct {
	mu   sync.Mutex
	list []copyRun
}

type copyRun struct {
	start, end time.Time
	env        map[string]string
	licence    *proc.Licence
}

// serve behaves like a service that runs until it is stopped (it takes
// stop to die after that), or exits by itself after life when life > 0.
func (c *copies) serve(life, stop time.Duration) func(context.Context, proc.Spec) proc.Result {
	return func(ctx context.Context, s proc.Spec) proc.Result {
		c.mu.Lock()
		i := len(c.list)
		c.list = append(c.list, copyRun{start: time.Now(), env: envMap(s.Env), licence: s.Licence})
		c.mu.Unlock()
		if s.OnStart != nil {
			s.OnStart(2000 + i)
		}
		var exit <-chan time.Time
		if life > 0 {
			t := time.NewTimer(life)
			defer t.Stop()
			exit = t.C
		}
		res := proc.Result{ExitCode: 3}
		select {
		case <-exit:
		case <-ctx.Done():
			time.Sleep(stop)
			res = proc.Result{Stopped: true, ExitCode: -1, Signal: 15}
		}
		c.mu.Lock()
		c.list[i].end = time.Now()
		c.mu.Unlock()
		return res
	}
}

func (c *copies) all() []copyRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]copyRun(nil), c.list...)
}

func scheduler() ServiceSpec {
	return ServiceSpec{Name: "scheduler", Command: []string{"/usr/bin/python3", "app.py"}, StopGrace: 5 * time.Second}
}

// serviceRunner is a Runner with one service whose copies c records.
func serviceRunner(t *testing.T, cfg testConfig, exec func(context.Context, proc.Spec) proc.Result) *Runner {
	t.Helper()
	if cfg.Node == "" {
		cfg.Node = "n1"
	}
	if cfg.Services == nil {
		cfg.Services = []ServiceSpec{scheduler()}
	}
	r := newTestRunnerCfg(t, cfg, nil)
	r.exec = exec
	return r
}

// TestServiceRunsOnlyWhileLeading: a copy starts when this node leads, with
// its identity (LANLEADER_TERM) in its environment, is restarted with a
// doubling delay when it exits, and is stopped when leadership ends; the
// ledger records it running under the term, then stopped.
func TestServiceRunsOnlyWhileLeading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var c copies
		var exits []ServiceExit
		var mu sync.Mutex
		r := serviceRunner(t, testConfig{OnServiceExit: func(e ServiceExit) { mu.Lock(); exits = append(exits, e); mu.Unlock() }},
			c.serve(10*time.Second, time.Second))
		el := newFakeElector(ctx, "n1", r.Callbacks())

		time.Sleep(time.Minute)
		assert.Empty(t, c.all(), "a follower runs no copy")
		assert.Equal(t, ServiceIdle, r.Services()[0].State)

		start := time.Now()
		el.lead(7)
		synctest.Wait()
		st := r.Services()[0]
		assert.Equal(t, ServiceRunning, st.State)
		assert.Equal(t, uint64(7), st.Term)
		assert.NotZero(t, st.PID)
		assert.Equal(t, &RecordedCopy{Term: 7, Node: "n1", Running: true}, st.LastCopy)

		// Exits after 10 s each time: restarts after 1 s, 2 s, 4 s.
		time.Sleep(10*time.Second + 1*time.Second + 10*time.Second + 2*time.Second + 10*time.Second + 4*time.Second + time.Second)
		synctest.Wait()
		runs := c.all()
		require.Len(t, runs, 4)
		assert.Equal(t, start, runs[0].start, "started at once: nothing ran before")
		for i, gap := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			assert.Equal(t, gap, runs[i+1].start.Sub(runs[i].end), "restart %d's delay", i+1)
		}
		assert.Equal(t, "7", runs[0].env["LANLEADER_TERM"])
		assert.Equal(t, "scheduler", runs[0].env["LANLEADER_SERVICE"])
		assert.Equal(t, "n1", runs[0].env["LANLEADER_NODE"])
		assert.Equal(t, uint64(3), r.Services()[0].Restarts)
		mu.Lock()
		require.Len(t, exits, 3, "OnServiceExit for each exit while leading")
		assert.Equal(t, ServiceExit{Service: "scheduler", Term: 7, Result: "exit 3", ExitCode: 3, Ran: 10 * time.Second, Restarts: 1}, exits[0])
		mu.Unlock()

		stepDown := time.Now()
		el.follow("n2", 8)
		synctest.Wait()
		assert.Equal(t, ServiceStopping, r.Services()[0].State, "SIGTERM sent, not gone yet")
		time.Sleep(2 * time.Second)
		runs = c.all()
		assert.Len(t, runs, 4, "no copy after leadership ended")
		assert.Equal(t, stepDown.Add(time.Second), runs[3].end, "stopped when leadership ended")
		st = r.Services()[0]
		assert.Equal(t, ServiceIdle, st.State)
		assert.Equal(t, &RecordedCopy{Term: 7, Node: "n1", Running: false}, st.LastCopy, "recorded stopped once gone")
		assert.Equal(t, uint64(3), st.Restarts, "a stop is no restart")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// quorum is the promise of udp's quorum mode: a deposed leader stops
// acting before its successor starts.
var quorum = election.Succession{Bounded: true}

// TestServiceSuccessorWaitsForThePreviousCopy: a leader that knows another
// node's copy was recorded running under an earlier term starts its own
// only when that copy can no longer be running — the successor's start
// plus the copy's stop bound (licence, stop grace, kill), timed by the old
// leader's clock and so counted a fifth longer — or at once when
// it hears the copy was stopped; where nothing bounds a deposed leader it
// starts at once.
func TestServiceSuccessorWaitsForThePreviousCopy(t *testing.T) {
	// The old leader's copy had stop_grace 5s; this node's spec says 5s
	// too (serviceRunner's), or, below, 1s: it waits by the old one's.
	stop := serviceStop(&ServiceSpec{StopGrace: 5 * time.Second}).Round(time.Millisecond)
	running := Ledger{Entries: []LedgerEntry{serviceEntry(ServiceIDOf("scheduler"), 5, 1, OutcomeRunning, stop)}}
	stopped := Ledger{Entries: []LedgerEntry{serviceEntry(ServiceIDOf("scheduler"), 5, 1, OutcomeOK, stop)}}
	for _, tc := range []struct {
		name       string
		succession election.Succession
		heard      []Ledger
		stoppedAt  time.Duration // when the "stopped" word comes (0: never)
		wantAfter  time.Duration
	}{
		{"nothing known", quorum, nil, 0, 0},
		{"known stopped", quorum, []Ledger{stopped}, 0, 0},
		{"running, never heard of again", quorum, []Ledger{running}, 0, stretched(stop)},
		{"running, then stopped", quorum, []Ledger{running}, 3 * time.Second, 3 * time.Second},
		{"running, no quorum", election.Succession{}, []Ledger{running}, 0, 0},
		{"running, this node's stop_grace shorter", quorum, []Ledger{running}, 0, stretched(stop)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var c copies
				spec := scheduler()
				if strings.Contains(tc.name, "shorter") {
					spec.StopGrace = time.Second
				}
				r := serviceRunner(t, testConfig{Node: "n2", Succession: tc.succession, Services: []ServiceSpec{spec}}, c.serve(0, time.Second))
				el := newFakeElector(ctx, "n2", r.Callbacks())
				el.follow("n1", 5)
				for _, l := range tc.heard {
					require.NoError(t, r.AdoptLedger(l.Encode()))
				}
				since := time.Now()
				el.lead(6)
				if tc.stoppedAt > 0 {
					time.Sleep(tc.stoppedAt)
					require.NoError(t, r.AdoptLedger(stopped.Encode()))
				}
				time.Sleep(stretched(stop) + time.Second)
				synctest.Wait()
				runs := c.all()
				require.Len(t, runs, 1)
				assert.Equal(t, tc.wantAfter, runs[0].start.Sub(since))
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

// TestServiceRecordedBeforeItStarts: the copy's ledger entry goes through
// the Cluster's Commit before the copy starts; a gate that refuses starts
// nothing, and a later try starts it once the gate says yes.
func TestServiceRecordedBeforeItStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var c copies
		var refuse atomic.Bool
		refuse.Store(true)
		var committed []LedgerEntry
		var mu sync.Mutex
		gate := gateFunc(func(_ context.Context, name string, e LedgerEntry) error {
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, "service:scheduler", name)
			assert.Empty(t, c.all(), "committed before the copy started")
			committed = append(committed, e)
			if refuse.Load() {
				return errors.New("no majority")
			}
			return nil
		})
		r := serviceRunner(t, testConfig{Gate: gate}, c.serve(0, 0))
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(4)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Empty(t, c.all(), "the gate refused")
		refuse.Store(false)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Len(t, c.all(), 1)
		mu.Lock()
		require.NotEmpty(t, committed)
		last := committed[len(committed)-1]
		assert.Equal(t, ServiceIDOf("scheduler"), last.JobID)
		assert.Equal(t, OutcomeRunning, last.Outcome)
		assert.Equal(t, uint64(4), last.Term)
		assert.Equal(t, serviceStop(&ServiceSpec{StopGrace: 5 * time.Second}).Round(time.Millisecond), serviceStopOf(last), "the entry carries the copy's stop bound")
		mu.Unlock()
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// TestServiceStartsOnlyWhenThisNodeMayAct: a leader whose guard says no
// (paused, lease lost) starts no copy until it says yes, and renews the
// licence only while it does.
func TestServiceStartsOnlyWhenThisNodeMayAct(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var c copies
		var may atomic.Bool
		r := serviceRunner(t, testConfig{CanRun: may.Load}, c.serve(0, 0))
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(4)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		assert.Empty(t, c.all())
		assert.Equal(t, ServiceWaiting, r.Services()[0].State)
		may.Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		runs := c.all()
		require.Len(t, runs, 1)
		lic := runs[0].licence
		require.NotNil(t, lic)
		renewed := lic.Deadline()
		time.Sleep(time.Second)
		assert.Greater(t, lic.Deadline(), renewed, "renewed while this node may act")
		may.Store(false)
		time.Sleep(Licence / 5)
		held := lic.Deadline()
		time.Sleep(5 * time.Second)
		assert.Equal(t, held, lic.Deadline(), "not renewed while this node may not act")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// TestServiceStoppedByDrain: Drain stops the copy (it counts as a run
// going) and returns once it is gone; the ledger records it stopped.
func TestServiceStoppedByDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var c copies
		r := serviceRunner(t, testConfig{}, c.serve(0, 3*time.Second))
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(2)
		time.Sleep(time.Minute)
		synctest.Wait()
		drained := time.Now()
		require.NoError(t, r.Drain(context.Background()))
		runs := c.all()
		require.Len(t, runs, 1)
		assert.Equal(t, drained.Add(3*time.Second), runs[0].end)
		assert.Equal(t, drained.Add(3*time.Second), time.Now(), "Drain waited for the copy")
		// Recorded stopped by the time Drain returns: the daemon writes the
		// ledger back (etcd) and resigns next, and a successor that reads
		// the copy still running waits out its whole stop bound.
		assert.False(t, r.Services()[0].LastCopy.Running, "recorded stopped when Drain returns")
		synctest.Wait()
		time.Sleep(time.Minute)
		assert.Len(t, c.all(), 1, "none starts after Drain")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// TestServiceReload: a reload that changes a service stops its copy and
// starts the new definition once the old copy is gone; one that removes it
// stops it; adding it back waits for that copy too.
func TestServiceReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var c copies
		r := serviceRunner(t, testConfig{}, c.serve(0, 2*time.Second))
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(2)
		time.Sleep(time.Minute)
		changed := scheduler()
		changed.Command = []string{"/usr/bin/python3", "app.py", "--v2"}
		reload := time.Now()
		res, err := r.UpdateServices([]ServiceSpec{changed})
		require.NoError(t, err)
		assert.Equal(t, []string{"scheduler"}, res.Changed)
		time.Sleep(time.Minute)
		runs := c.all()
		require.Len(t, runs, 2)
		assert.Equal(t, reload.Add(2*time.Second), runs[0].end)
		assert.False(t, runs[1].start.Before(runs[0].end), "the new definition after the old copy is gone")
		assert.True(t, r.Services()[0].LastCopy.Running, "the new copy is recorded running, not the old one's stop")

		res, err = r.UpdateServices(nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"scheduler"}, res.Removed)
		readd := time.Now()
		_, err = r.UpdateServices([]ServiceSpec{changed})
		require.NoError(t, err)
		time.Sleep(time.Minute)
		runs = c.all()
		require.Len(t, runs, 3)
		assert.Equal(t, readd.Add(2*time.Second), runs[1].end)
		assert.False(t, runs[2].start.Before(runs[1].end), "added back after the removed copy is gone")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// TestServiceEntriesOrder: a service's entries are ordered by term, then by
// copy (a reload's later copy), then running before stopped, whatever
// stop bound each carries; and they keep that bound.
func TestServiceEntriesOrder(t *testing.T) {
	id := ServiceIDOf("scheduler")
	long, short := 10*time.Second, time.Second
	for _, tc := range []struct {
		name       string
		newer, old LedgerEntry
	}{
		{"a later term", serviceEntry(id, 6, 1, OutcomeRunning, short), serviceEntry(id, 5, 9, OutcomeOK, long)},
		{"a later copy of the term", serviceEntry(id, 5, 2, OutcomeRunning, short), serviceEntry(id, 5, 1, OutcomeOK, long)},
		{"stopped after running", serviceEntry(id, 5, 2, OutcomeOK, short), serviceEntry(id, 5, 2, OutcomeRunning, short)},
		// Past 8796 copies gen × 2^20 s no longer fit a time.Duration.
		{"a later copy, many copies on", serviceEntry(id, 5, 9001, OutcomeRunning, short), serviceEntry(id, 5, 9000, OutcomeOK, long)},
		{"a later copy, very many on", serviceEntry(id, 5, 1<<30+1, OutcomeRunning, short), serviceEntry(id, 5, 1<<30, OutcomeOK, long)},
	} {
		assert.True(t, isServiceEntry(tc.newer) && isServiceEntry(tc.old), tc.name)
		assert.True(t, newer(tc.newer, tc.old), tc.name)
		assert.False(t, newer(tc.old, tc.newer), tc.name)
		assert.Equal(t, short, serviceStopOf(tc.newer), tc.name)
	}
	assert.Equal(t, long, serviceStopOf(serviceEntry(id, 5, 3, OutcomeRunning, long)))
	e := serviceEntry(id, 5, 3, OutcomeRunning, long)
	l, err := DecodeLedger(Ledger{Entries: []LedgerEntry{e}}.Encode())
	require.NoError(t, err)
	assert.Equal(t, e, l.Entries[0], "the bound and the copy survive the wire")
}

// TestServiceUnlicensedStartIsNoExit: a copy whose licence ran out before
// its exec (this node stalled between its check and the start) never ran:
// it is no exit of the service (no restart counted, no OnServiceExit, its
// last exit kept) and a copy starts again once this node may act.
func TestServiceUnlicensedStartIsNoExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var c copies
		var exits atomic.Int32
		serve := c.serve(0, 0)
		var calls atomic.Int32
		r := serviceRunner(t, testConfig{OnServiceExit: func(ServiceExit) { exits.Add(1) }},
			func(ctx context.Context, s proc.Spec) proc.Result {
				if calls.Add(1) == 1 {
					return proc.Result{ExitCode: -1, Err: proc.ErrUnlicensed}
				}
				return serve(ctx, s)
			})
		el := newFakeElector(ctx, "n1", r.Callbacks())
		el.lead(3)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Len(t, c.all(), 1, "started again")
		st := r.Services()[0]
		assert.Equal(t, ServiceRunning, st.State)
		assert.Zero(t, st.Restarts, "nothing ran: no restart")
		assert.Empty(t, st.LastExit, "nothing ran: no exit")
		assert.Zero(t, exits.Load(), "nothing ran: no on_service_exit")
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}
