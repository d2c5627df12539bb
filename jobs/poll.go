package jobs

import (
	"bytes"
	"context"
	"time"
)

// Run polls RunnerConfig.PeerLedger every PeerLedgerPoll and adopts the
// ledgers other leaders send, until ctx is done; it returns nil then. It
// is only needed when PeerLedger is set (otherwise it just waits for ctx).
// Scheduling itself does not depend on Run: it follows the Callbacks.
func (r *Runner) Run(ctx context.Context) error {
	if r.cfg.PeerLedger == nil {
		<-ctx.Done()
		return nil
	}
	var lastLeader string
	var lastTerm uint64
	var last []byte
	t := time.NewTicker(PeerLedgerPoll)
	defer t.Stop()
	for {
		leader, term, b := r.cfg.PeerLedger()
		if leader != "" && leader != r.cfg.Node && len(b) > 0 &&
			(leader != lastLeader || term != lastTerm || !bytes.Equal(b, last)) {
			lastLeader, lastTerm, last = leader, term, append(last[:0], b...)
			if err := r.AdoptLedger(b); err != nil {
				r.log.Warn("jobs: ignoring malformed ledger from leader", "leader", leader, "term", term, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
