package udp

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// prober runs the protocol's leader probes (protocol.Node.ProbeAt) on the
// transport's Prober, one at a time, off the run loop: a probe waits for an
// answer that a live leader never sends. Results come back on done and are
// stepped into the node by the run loop.
type prober struct {
	p    Prober // nil: the transport cannot probe; nothing is ever due
	wait time.Duration
	done chan probeResult
	busy bool // a probe is in flight (run loop only)
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

// next returns when a probe is due, or the zero time (never).
func (pr *prober) next(node *protocol.Node) time.Time {
	if pr.p == nil {
		return time.Time{}
	}
	return node.ProbeAt()
}

// start takes the probe due at now from node, if any, and runs it unless
// one is still in flight. It must be called with the node's lock held.
func (pr *prober) start(ctx context.Context, node *protocol.Node, now time.Time) {
	if pr.p == nil {
		return
	}
	req, ok := node.Probe(now)
	if !ok || pr.busy {
		return
	}
	to, err := netip.ParseAddrPort(req.Addr)
	if err != nil {
		return // an address the transport did not produce (tests): no probe
	}
	pr.busy = true
	pr.wg.Add(1)
	go func() {
		defer pr.wg.Done()
		unreachable, _ := pr.p.Probe(ctx, to, pr.wait)
		pr.done <- probeResult{req: req, unreachable: unreachable}
	}()
}

// stop waits for the probe in flight, which ctx's cancellation ends.
func (pr *prober) stop() {
	pr.wg.Wait()
}

// probed steps a probe's result into the node: "unreachable" makes it
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
