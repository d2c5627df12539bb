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

// payloadSource mimics the UDP elector's LeaderPayload: the newest payload
// heard from a leader, replaced by our own when we become leader.
type payloadSource struct {
	mu      sync.Mutex
	leader  string
	term    uint64
	payload []byte
}

func (p *payloadSource) set(leader string, term uint64, b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.leader, p.term, p.payload = leader, term, b
}

func (p *payloadSource) get() (string, uint64, []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leader, p.term, p.payload
}

// Run adopts other leaders' ledgers while following and ignores its own,
// so by the time the elector reports our own payload, the last leader's is
// already adopted.
func TestRunPollsPeerLedger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &fakeExec{}
		src := &payloadSource{}
		r := newTestRunnerCfg(t, RunnerConfig{Node: "b", Jobs: []Spec{everyMinute("m")}, PeerLedger: src.get}, f)
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()

		// a leads and started 00:05.
		at := time.Now().Add(5 * time.Minute)
		time.Sleep(5*time.Minute + 10*time.Second)
		src.set("a", 1, Ledger{Entries: []LedgerEntry{{JobID: JobIDOf("m"), Instant: at, Outcome: OutcomeOK, Term: 1}}}.Encode())
		time.Sleep(time.Second)
		// a dies at 00:05:30; b wins at 00:06:03; its elector now reports
		// b's own (empty) payload before the callback runs.
		time.Sleep(52 * time.Second)
		src.set("b", 2, Ledger{}.Encode())
		newFakeElector(ctx, "b", r.Callbacks()).lead(2)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		assert.Equal(t, []string{at.Add(time.Minute).Format(time.RFC3339)}, f.scheduled("m"),
			"00:06 was missed and is run once; 00:05 is not repeated")
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, r.Wait(context.Background()))
	})
}
