package udp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// Run takes part in the election until ctx is done, then resigns: a leader
// broadcasts RESIGN so its peers elect a successor at once instead of waiting
// for the suspicion timeout. Callbacks are called one at a time, from Run's
// goroutine or, for a packet or the timer, from the goroutine that read it
// (handoff.go); they must return promptly or heartbeats would be late.
func (e *Elector) Run(ctx context.Context, cb election.Callbacks) error {
	defer close(e.done)
	probeCtx, cancelProbes := context.WithCancel(ctx)
	// Deferred calls run last first: the run loop stops (stopLoop) before
	// the timer and the transport are closed, since closing them waits for
	// their readers, which may be waiting for the loop.
	defer e.cfg.Transport.Close()
	defer e.probes.stop()
	defer cancelProbes() // ends a probe in flight; runs before stop waits
	notifier := election.NewNotifier(ctx, cb, e.initial)
	e.mu.Lock()
	e.notifier = notifier
	e.mu.Unlock()

	e.loop.Lock()
	e.probeCtx = probeCtx
	e.timer = e.newTimer()
	defer e.timer.stop()
	// Packets are handed over only when the timer fires by itself too: a
	// timer that Run selects on must only be re-armed on Run's goroutine.
	if h, ok := e.cfg.Transport.(handoffTransport); ok && e.timer.C() == nil {
		h.HandOff(e.onPacket)
	}
	e.loop.Unlock()
	packets := e.cfg.Transport.Packets()
	for {
		select {
		case <-ctx.Done():
			e.stopLoop()
			return nil
		case p, ok := <-packets:
			if !ok {
				e.stopLoop()
				return errors.New("udp: transport closed")
			}
			e.onPacket(p)
		case <-e.publish:
			e.event(func() time.Time { e.publishNow(); return time.Time{} })
		case <-e.holdCh:
			e.event(func() time.Time { e.setHolding(); return time.Time{} })
		case w := <-e.commits:
			e.event(func() time.Time {
				e.publishNow()
				e.mu.Lock()
				w.ver = e.node.PayloadVersion()
				e.mu.Unlock()
				e.waiting = append(e.waiting, w)
				return time.Time{}
			})
		case <-e.timer.C():
			e.onTimer()
		case r := <-e.probes.done:
			e.event(func() time.Time { e.probed(r); return time.Time{} })
		}
	}
}

// event runs one event of the run loop, then what follows every event:
// sends, saves, commits, status. handle returns the clock reading it took,
// if any (the zero time if not). Events run one at a time (e.loop) and not
// at all once the loop has stopped.
func (e *Elector) event(handle func() time.Time) {
	e.loop.Lock()
	defer e.loop.Unlock()
	if e.stopped {
		return
	}
	now := handle()
	// As few clock readings as will do: on Linux each is a system call.
	now = e.flushOut(now, false)
	e.reportHearing(now)
	e.settleCommits(now)
	e.notifier.Update(e.currentStatus())
	e.logQuorum(now)
	e.timer.set(e.nextTick().Sub(now))
}

// onPacket is the event of one received packet.
func (e *Elector) onPacket(p Packet) {
	e.event(func() time.Time { return e.receive(p) })
}

// onTimer is the event of the run loop's timer: the node's next deadline
// (or a probe's) came.
func (e *Elector) onTimer() {
	e.event(func() time.Time {
		e.timer.fired()
		e.lockWithPayload()
		defer e.mu.Unlock()
		now := e.clock.Now()
		e.node.Tick(now)
		return now
	})
}

// stopLoop ends the run loop: no event runs after it. It resigns, and
// fails the Commit calls still waiting.
func (e *Elector) stopLoop() {
	e.loop.Lock()
	defer e.loop.Unlock()
	e.stopped = true
	e.resign(e.notifier)
	e.failCommits(fmt.Errorf("%w: elector stopped", ErrNotCommitted))
}

// newTimer returns the run loop's timer, armed to fire at once: a timerfd
// that calls onTimer from its own goroutine when time is real (osTimer),
// a Go timer that Run's select waits for otherwise.
func (e *Elector) newTimer() loopTimer {
	if e.osTimer {
		return newLoopTimer(e.onTimer)
	}
	return newWakeTimer()
}

// receive decodes one packet and steps the protocol with it. Packets that do
// not decode or authenticate are counted and dropped, never returned up.
// It returns the time it stepped the node at, or the zero time if it did
// not or if callbacks (OnPayload, OnRequest) ran after that.
func (e *Elector) receive(p Packet) time.Time {
	// Protocol time is the Elector's clock, not the transport's receive
	// stamp: that one stops during a host suspend.
	now := e.clock.Now()
	m, err := wire.Decode(p.Data, e.cfg.Keyring)
	if err != nil {
		e.auth.failed(e.log, now, p.From, wire.Reason(err))
		e.countPacket("unknown", wire.Reason(err))
		e.log.Debug("dropped packet", "from", p.From, "reason", wire.Reason(err), "err", err)
		return time.Time{}
	}
	m.Addr = p.From.String()
	if e.cfg.Keyring == nil && wire.Signed(p.Data) && m.From != e.cfg.Protocol.NodeID {
		e.auth.signed(e.log, now, p.From)
	}
	e.lockWithPayload() // what our claim, vote or handover carries
	e.node.Step(now, m)
	result := "ok"
	if r := e.node.LastDrop(); r != "" {
		result = string(r)
	}
	if result == "ok" {
		e.rememberAddr(m.From, p.From)
	}
	heard := e.node.Payloads()
	pausedAt := e.node.PausedAt()
	e.mu.Unlock()
	if result == "ok" {
		e.clocks.heard(e.log, &m, now, e.wall(), pausedAt)
	}
	e.countPacket(m.Type.String(), result)
	called := false
	for _, h := range heard {
		called = e.deliverPayload(h) || called
	}
	if e.serveRequests() || called {
		return time.Time{}
	}
	return now
}

// publishNow hands the node the current payload and, while leading,
// heartbeats it at once.
func (e *Elector) publishNow() {
	if e.cfg.Payload == nil {
		return
	}
	payload := e.cfg.Payload()
	e.mu.Lock()
	e.node.Publish(e.clock.Now(), payload)
	e.mu.Unlock()
}

// lockWithPayload locks e.mu and hands the node the application's current
// payload (Config.Payload), so that whatever it sends next carries it.
// Payload is read before the lock: it may call back into the Elector.
func (e *Elector) lockWithPayload() {
	var payload []byte
	if e.cfg.Payload != nil {
		payload = e.cfg.Payload()
	}
	e.mu.Lock()
	if payload != nil {
		e.node.SetPayload(payload)
	}
}

// setHolding hands the node the current payload, then the holding state:
// a release is sent with the runs' outcome.
func (e *Elector) setHolding() {
	e.lockWithPayload()
	defer e.mu.Unlock()
	e.node.SetHolding(e.clock.Now(), e.holding.Load())
}

// deliverPayload passes a payload heard from another node to OnPayload,
// once per change per sender, every time from a holding sender, and every
// time while the last call could not keep its payload (unkept); it
// reports whether it did.
func (e *Elector) deliverPayload(h protocol.PeerPayload) bool {
	if e.cfg.OnPayload == nil || h.From == e.cfg.Protocol.NodeID {
		return false
	}
	if last, ok := e.delivered[h.From]; ok && !e.unkept && !h.Holding && !last.Holding && bytes.Equal(last.Payload, h.Payload) {
		return false
	}
	if _, ok := e.delivered[h.From]; !ok && len(e.delivered) >= maxAddrs {
		clear(e.delivered)
	}
	e.unkept = e.cfg.OnPayload(h) != nil
	if e.unkept {
		delete(e.delivered, h.From)
	} else {
		e.delivered[h.From] = h
	}
	return true
}

// maxAddrs bounds the reply-address table. Directed replies only ever go
// to a sender just heard from, so forgetting everyone else is harmless.
const maxAddrs = 1024

// rememberAddr records where a node's accepted messages come from, so
// directed replies reach it (a `lanleader who` client's ephemeral port).
// Only messages the protocol accepted count: a replayed or foreign packet
// must not redirect replies. Must be called with e.mu held.
func (e *Elector) rememberAddr(id string, addr netip.AddrPort) {
	if _, ok := e.addrs[id]; !ok && len(e.addrs) >= maxAddrs {
		clear(e.addrs)
	}
	e.addrs[id] = addr
}

func (e *Elector) countPacket(typ, result string) {
	if e.cfg.OnPacket != nil {
		e.cfg.OnPacket(typ, result)
	}
}

// flush saves what must be durable (durable.go), then sends what the
// protocol queued: broadcasts to all, directed messages to the address
// their recipient last sent from (or to all if unknown). VOTEs and ACKs
// wait while the election state is not saved, ACKs also while a payload
// heard is not kept (unkept).
func (e *Elector) flush() { e.flushOut(time.Time{}, false) }

// flushOut is flush, at now (the zero time: it reads the clock); final
// also saves the replay table, whatever the cadence (Run is returning).
// It returns the time when it was done: read
// again after a store or a send, which can take long enough (a broadcast's
// delivery runs in the sender's system call) to delay the timer armed
// from it.
func (e *Elector) flushOut(now time.Time, final bool) time.Time {
	e.mu.Lock()
	out := e.node.Ready()
	if now.IsZero() {
		now = e.clock.Now()
	}
	d, state, replay, due := e.durable.collect(e.node, now, final)
	e.mu.Unlock()
	if due {
		// Before anything goes out: a claim of a new round, a vote or ack
		// binding a new candidate must not leave before it is on disk.
		e.durable.store(e.log, d, state, replay, now)
	}
	saved := e.durable.current(state)
	for _, env := range out {
		if !saved && heldBack(env.Msg) || e.unkept && env.Msg.Type == protocol.Ack {
			continue
		}
		sentAt := now
		if env.Msg.Type == protocol.Heartbeat {
			sentAt = e.clock.Now() // after any store: the round trip starts here
		}
		e.clocks.stamp(&env.Msg, sentAt, e.wall())
		b, err := wire.Encode(env.Msg, e.cfg.Keyring)
		if err != nil && len(env.Msg.Payload) > 0 {
			// A heartbeat must go out even if the payload (the job ledger)
			// outgrew a datagram: losing the ledger costs duplicate
			// protection on failover, losing heartbeats costs the leader.
			e.log.Warn("payload too large for a packet; sent without it", "size", len(env.Msg.Payload), "err", err)
			env.Msg.Payload = nil
			b, err = wire.Encode(env.Msg, e.cfg.Keyring)
		}
		if err != nil {
			e.log.Error("encode failed; message not sent", "type", env.Msg.Type, "err", err)
			continue
		}
		e.mu.Lock()
		to, known := e.addrs[env.To]
		e.mu.Unlock()
		if env.To != "" && known {
			err = e.cfg.Transport.SendTo(b, to)
			if env.Msg.Type == protocol.Probe {
				e.probes.start(e.probeCtx, protocol.ProbeRequest{Leader: env.To, Term: env.Msg.Term, Addr: to.String()})
			}
		} else {
			err = e.cfg.Transport.Broadcast(b)
		}
		if err != nil {
			// The transport retries and logs socket trouble itself; a lost
			// packet is what the protocol is built to survive.
			e.log.Debug("send failed", "type", env.Msg.Type, "to", env.To, "err", err)
		}
	}
	if due || len(out) > 0 {
		now = e.clock.Now()
	}
	return now
}

func (e *Elector) currentStatus() election.Status { return onNode(e, (*protocol.Node).Status) }

// nextTick is when the run loop must wake: the node's next deadline (a
// leader probe's included), or the quorum log's.
func (e *Elector) nextTick() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := e.node.NextTick()
	if w := e.qlog.warnAt(e.cfg.Protocol.Timings().Promise); !w.IsZero() && w.Before(next) {
		next = w
	}
	return next
}

// resign hands leadership over (if held). Order matters: the node stops
// leading first (CanActAsLeader is false from here), then the leadership
// ends for the application (its context is cancelled, OnStoppedLeading has
// returned), and only then does the RESIGN leave — so no successor can
// start leading while this node still does.
func (e *Elector) resign(notifier *election.Notifier) {
	e.mu.Lock()
	wasLeader := e.node.Status().Role == election.Leader
	e.node.Resign(e.clock.Now())
	final := e.node.Status()
	e.mu.Unlock()
	notifier.Stop(final)
	if wasLeader {
		e.log.Info("resigned leadership", slog.Uint64("term", final.Term))
	}
	e.flushOut(time.Time{}, true)
}

// reportHearing logs changes in who hears whom (hearing_log.go).
func (e *Elector) reportHearing(now time.Time) {
	e.mu.Lock()
	h := e.node.Hearing(now)
	leader := e.node.Status().Leader.ID
	e.mu.Unlock()
	e.hearing.report(e.log, now, h, leader, &e.auth)
}
