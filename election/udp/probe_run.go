package udp

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// prober checks, beside the protocol's PROBE of a silent leader, whether
// the leader's port is closed (Prober: an ICMP port unreachable), one
// check at a time, off the run loop: a check waits for an answer that a
// live leader never sends. Results come back on done and are stepped into
// the node by the run loop.
type prober struct {
	p    Prober // nil: the transport cannot check; only PROBE's answer counts
	wait time.Duration
	done chan probeResult
	busy bool // a check is in flight (run loop only)
	wg   sync.WaitGroup
}

type probeResult struct {
	req         protocol.ProbeRequest
	unreachable bool
}

func newProber(t Transport, wait time.Duration) *prober {
	p, _ := t.(Prober)
	return &prober{p: p, wait: wait, done: make(chan probeResult, 1)}
}

// start checks req's address unless a check is still in flight (one per
// run of probes is enough: a closed port answers the first). It runs in
// the run loop.
func (pr *prober) start(ctx context.Context, req protocol.ProbeRequest) {
	if pr.p == nil || pr.busy {
		return
	}
	to, err := netip.ParseAddrPort(req.Addr)
	if err != nil {
		return // an address the transport did not produce (tests): no check
	}
	pr.busy = true
	pr.wg.Add(1)
	go func() {
		defer pr.wg.Done()
		unreachable, _ := pr.p.Probe(ctx, to, pr.wait)
		pr.done <- probeResult{req: req, unreachable: unreachable}
	}()
}

// stop waits for the check in flight, which ctx's cancellation ends.
func (pr *prober) stop() {
	pr.wg.Wait()
}

// probed steps a check's result into the node: "unreachable" makes it
// suspect the leader at once.
func (e *Elector) probed(r probeResult) {
	e.probes.busy = false
	if !r.unreachable {
		return
	}
	e.log.Info("leader's port is closed: its process is gone; suspecting it now",
		"leader", r.req.Leader, "addr", r.req.Addr, "term", r.req.Term)
	e.mu.Lock()
	e.node.LeaderUnreachable(e.clock.Now(), r.req.Leader, r.req.Term)
	e.mu.Unlock()
}
