package jobs

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// heartbeatNet passes the leader's ledger to the other live nodes once a
// second, as the udp elector's heartbeats do, and so the ledgers of the
// live holders, marked holding, as their electors do on each heartbeat of
// their leader; a dead node sends and hears nothing. For tests inside a
// synctest bubble.
type heartbeatNet struct {
	mu      sync.Mutex
	leader  *Runner
	nodes   []*Runner
	holders []*Runner
}

// run heartbeats until ctx ends, in a goroutine of wg.
func (h *heartbeatNet) run(ctx context.Context, t *testing.T, wg *sync.WaitGroup) {
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			h.beat(t)
		}
	})
}

func (h *heartbeatNet) beat(t *testing.T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.leader == nil {
		return
	}
	for _, r := range h.nodes {
		if r != h.leader {
			require.NoError(t, r.AdoptLedgerFrom(h.leader.cfg.Node, HoldsNothing, h.leader.Ledger()))
		}
	}
	for _, hr := range h.holders {
		if !slices.Contains(h.nodes, hr) {
			continue
		}
		for _, r := range h.nodes {
			if r != hr {
				require.NoError(t, r.AdoptLedgerFrom(hr.cfg.Node, HoldsMarked, hr.Ledger()))
			}
		}
	}
}

// hold makes rs the nodes that hold runs (none: nil).
func (h *heartbeatNet) hold(rs ...*Runner) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holders = rs
}

// set makes l the leader (nil: none) and live the nodes on the network.
func (h *heartbeatNet) set(l *Runner, live ...*Runner) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.leader, h.nodes = l, live
}
