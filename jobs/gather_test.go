package jobs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ledgerOf encodes one entry.
func ledgerOf(job string, instant time.Time, o Outcome, term uint64) []byte {
	return Ledger{Entries: []LedgerEntry{{JobID: JobIDOf(job), Instant: instant, Outcome: o, Term: term}}}.Encode()
}

// heldLedgerOf is the ledger of a node that runs job's run of instant
// under term: its entry running and marked held (LedgerEntry.Held).
func heldLedgerOf(job string, instant time.Time, term uint64) []byte {
	return Ledger{Entries: []LedgerEntry{{JobID: JobIDOf(job), Instant: instant, Outcome: OutcomeRunning, Term: term,
		Held: true}}}.Encode()
}

// The measured bug: a leader ran 00:01:00, the follower missed every ledger
// naming it and took over 876 ms later. With a gathering window, the
// deposed leader's ledger that arrives inside the window stops the misfire
// run; without it (or arriving after the window) the new leader runs the
// instant once, when the window ends. The next instant is never delayed.
func TestGatheringWindowStopsTheMisfireDuplicate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		heardAt time.Duration // after the takeover; 0: never
		want    []string
		wantAt  time.Duration // when the misfire run started, after takeover
	}{
		{"deposed leader's ledger inside the window", 400 * time.Millisecond, []string{"00:02:00"}, 0},
		{"no ledger heard", 0, []string{"00:01:00", "00:02:00"}, time.Second},
		{"ledger after the window", 1500 * time.Millisecond, []string{"00:01:00", "00:02:00"}, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				f := &fakeExec{}
				r := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{everyMinute("m")}, Gather: time.Second}, f)
				// b heard the old leader's ledger up to 00:00:00.
				require.NoError(t, r.AdoptLedger(ledgerOf("m", minute(0), OutcomeOK, 1)))
				time.Sleep(minute(1).Sub(time.Now()) + 876*time.Millisecond)
				takeover := time.Now()
				el := newFakeElector(ctx, "b", r.Callbacks())
				el.lead(2)
				if tc.heardAt > 0 {
					time.Sleep(tc.heardAt)
					require.NoError(t, r.AdoptLedger(ledgerOf("m", minute(1), OutcomeOK, 1)))
				}
				time.Sleep(minute(2).Sub(time.Now()) + time.Second)
				synctest.Wait()
				var got []string
				for _, c := range f.all() {
					got = append(got, c.Env["LANLEADER_SCHEDULED_AT"][11:19])
					if c.Env["LANLEADER_SCHEDULED_AT"][11:19] == "00:01:00" {
						assert.Equal(t, tc.wantAt, c.At.Sub(takeover), "the misfire run waits for the window")
					}
					if c.Env["LANLEADER_SCHEDULED_AT"][11:19] == "00:02:00" {
						assert.True(t, minute(2).Equal(c.At), "instants after the takeover are not delayed: %v", c.At)
					}
				}
				assert.Equal(t, tc.want, got)
				cancel()
				require.NoError(t, r.Wait(context.Background()))
			})
		})
	}
}

// An instant due inside the window runs on time; if a ledger heard meanwhile
// already names it (the deposed leader ran it), it is not started again.
func TestGatheringWindowInstantDueInsideIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		spec := Spec{Name: "s", Schedule: "@every 1s", Shell: "x"}
		r := newTestRunnerCfg(t, testConfig{Node: "b", Jobs: []Spec{spec}, Gather: 3 * time.Second}, f)
		time.Sleep(500 * time.Millisecond)
		el := newFakeElector(ctx, "b", r.Callbacks())
		el.lead(2)
		time.Sleep(time.Second) // 00:00:01 runs on time
		require.NoError(t, r.AdoptLedger(ledgerOf("s", time.Now().Truncate(time.Second).Add(time.Second), OutcomeRunning, 1)))
		time.Sleep(1200 * time.Millisecond) // 00:00:02 was named by the old leader
		synctest.Wait()
		assert.Equal(t, []string{"2000-01-01T00:00:01Z"}, f.scheduled("s"))
		assert.Equal(t, uint64(1), r.Snapshot()[0].Skipped.AlreadyStarted)
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// The gate is asked before every run with the run's entry; a refusal means
// no process, a Refused count and a cancelled record.
func TestStartGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		var mu sync.Mutex
		var asked []LedgerEntry
		var refuse atomic.Bool
		refuse.Store(true)
		var recs records
		gate := gateFunc(func(ctx context.Context, job string, e LedgerEntry) error {
			assert.Equal(t, "m", job)
			assert.NoError(t, ctx.Err(), "asked with the live leadership context")
			mu.Lock()
			asked = append(asked, e)
			mu.Unlock()
			if refuse.Load() {
				return errors.New("no majority")
			}
			return nil
		})
		r := newTestRunnerCfg(t, testConfig{Node: "a", Jobs: []Spec{everyMinute("m")}, Gate: gate, OnRunFinished: recs.add}, f)
		el := newFakeElector(ctx, "a", r.Callbacks())
		el.lead(1)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		assert.Empty(t, f.all(), "refused: nothing started")
		mu.Lock()
		require.Len(t, asked, 1)
		assert.True(t, asked[0].Instant.Equal(minute(1)), "instant %v", asked[0].Instant)
		assert.Equal(t, LedgerEntry{JobID: JobIDOf("m"), Instant: asked[0].Instant, Outcome: OutcomeRunning, Term: 1, Stop: defaultStop}, asked[0])
		mu.Unlock()
		s := r.Snapshot()[0]
		assert.Equal(t, uint64(1), s.Skipped.Refused)
		assert.Equal(t, OutcomeCancelled, s.Ledger.Outcome)
		require.Len(t, recs.all(), 1)
		assert.Contains(t, recs.all()[0].Error, "no majority")
		refuse.Store(false)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"2000-01-01T00:02:00Z"}, f.scheduled("m"))
		cancel()
		require.NoError(t, r.Wait(context.Background()))
	})
}

// minute returns 2000-01-01 00:0k:00 UTC, the synctest epoch plus k
// minutes.
func minute(k int) time.Time {
	return time.Date(2000, 1, 1, 0, k, 0, 0, time.UTC)
}
