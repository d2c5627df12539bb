package udptest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Cut drops everything sent from → to (a one-way partition).
func (s *Sim) Cut(from, to string) {
	if s.cut[from] == nil {
		s.cut[from] = map[string]bool{}
	}
	s.cut[from][to] = true
	s.MarkDirty("cut")
	s.logf("cut %s->%s", from, to)
}

// CutBoth drops everything between a and b.
func (s *Sim) CutBoth(a, b string) { s.Cut(a, b); s.Cut(b, a) }

// Isolate cuts id off from every other node, both ways.
func (s *Sim) Isolate(id string) {
	for _, o := range s.ids {
		if o != id {
			s.CutBoth(id, o)
		}
	}
}

// Partition splits the cluster into groups that cannot talk to each other;
// nodes not listed form one more group.
func (s *Sim) Partition(groups ...[]string) {
	side := map[string]int{}
	for _, id := range s.ids {
		side[id] = len(groups)
	}
	for i, g := range groups {
		for _, id := range g {
			side[id] = i
		}
	}
	for _, a := range s.ids {
		for _, b := range s.ids {
			if a != b && side[a] != side[b] {
				if s.cut[a] == nil {
					s.cut[a] = map[string]bool{}
				}
				s.cut[a][b] = true
			}
		}
	}
	s.lastSides = side
	s.MarkDirty("partition")
	s.logf("partition %v", groups)
}

// Heal removes every cut, deafness and muteness. The first packet that then crosses between the
// sides of the last Partition is recorded (CrossedAt).
func (s *Sim) Heal() {
	s.cut = map[string]map[string]bool{}
	for _, id := range s.ids {
		s.Hear(id)
	}
	if s.lastSides != nil {
		s.watch, s.crossedAt = s.lastSides, time.Time{}
	}
	s.logf("heal")
}

// CrossedAt returns when the first packet crossed between the sides of the
// last Partition after Heal; zero if none yet.
func (s *Sim) CrossedAt() time.Time { return s.crossedAt }

// Crash stops id at once: no resign, in-flight messages to it are lost.
func (s *Sim) Crash(id string) {
	sn := s.mustNode(id)
	if !sn.up {
		return
	}
	sn.up, sn.paused, sn.buffered, sn.waking = false, false, nil, nil
	sn.gen++
	s.logf("%s crash", id)
	s.inv.crashed(s, sn)
}

// Restart boots a crashed id as a new process with a larger incarnation.
func (s *Sim) Restart(id string) {
	sn := s.mustNode(id)
	if sn.up {
		return
	}
	s.boot(sn)
}

// Stop makes id resign gracefully, then crash (process exit).
func (s *Sim) Stop(id string) {
	sn := s.mustNode(id)
	if !sn.up || sn.paused {
		return
	}
	s.logf("%s resign", id)
	sn.n.Resign(s.nodeNow(sn))
	if sn.app != nil {
		sn.app.resigned = true // Run reports its last status through Notifier.Stop
	}
	s.saveState(sn, true)
	s.after(sn)
	s.Crash(id)
}

// Pause freezes id (SIGSTOP, CPU starvation): no ticks; deliveries wait in
// its socket buffer.
func (s *Sim) Pause(id string) {
	sn := s.mustNode(id)
	if !sn.up || sn.paused {
		return
	}
	sn.paused = true
	// Deliveries it had not handled since it last woke go back in its
	// buffer; the tick comes at the next Resume.
	for _, w := range sn.waking {
		if !w.tick {
			sn.buffered = append(sn.buffered, w.msg)
		}
	}
	sn.waking = nil
	s.logf("%s pause", id)
	s.checkKnown()
}

// Resume thaws id. What waited — the deliveries in its socket buffer and
// its overdue tick — is handled one event each (the job rules and the
// invariants run between them), in the order they queued, with the tick
// drawn at any place among them: a real process's packet goroutine may
// read any number of queued packets before its timer goroutine ticks. The
// first is handled now; deliveries that arrive meanwhile queue behind the
// rest.
func (s *Sim) Resume(id string) {
	sn := s.mustNode(id)
	if !sn.up || !sn.paused {
		return
	}
	sn.paused, sn.asleep = false, false
	s.logf("%s resume (%d buffered)", id, len(sn.buffered))
	steps := make([]wakeStep, 0, len(sn.buffered)+1)
	for _, m := range sn.buffered {
		steps = append(steps, wakeStep{msg: m})
	}
	sn.buffered = nil
	sn.waking = slices.Insert(steps, s.rng.IntN(len(steps)+1), wakeStep{tick: true})
	sn.wakes++
	s.wake(sn)
}

// stalled reports whether sn is paused, or resumed but still reading what
// queued while it was.
func (sn *simNode) stalled() bool { return sn.paused || len(sn.waking) > 0 }

// wakeStep is one thing a node resumed from a pause still has to handle:
// a queued delivery, or (tick) its overdue tick.
type wakeStep struct {
	tick bool
	msg  protocol.Message
}

// wake handles sn's next wake step and schedules the one after (evWake).
func (s *Sim) wake(sn *simNode) {
	w := sn.waking[0]
	sn.waking = sn.waking[1:]
	if w.tick {
		sn.n.Tick(s.nodeNow(sn))
	} else {
		s.Counters.Delivered++
		if s.opts.Trace {
			s.logf("%s recv %s from=%s term=%x seq=%d (queued)", sn.id, w.msg.Type, w.msg.From, w.msg.Term, w.msg.Seq)
		}
		sn.n.Step(s.nodeNow(sn), w.msg)
	}
	if len(sn.waking) == 0 {
		// Ticks that fell due while it woke were skipped: schedule the
		// next one whatever it is.
		sn.tickAt = time.Time{}
	}
	s.after(sn)
	if len(sn.waking) > 0 {
		s.push(&event{at: s.now, kind: evWake, node: sn.id, gen: sn.wakes})
	}
}

func (s *Sim) mustNode(id string) *simNode {
	sn := s.nodes[id]
	if sn == nil {
		panic(fmt.Sprintf("udptest: unknown node %q", id))
	}
	return sn
}

func (s *Sim) logf(format string, args ...any) {
	if !s.opts.Trace {
		return
	}
	line := fmt.Sprintf("%10.4fs ", s.now.Sub(s.start).Seconds()) + fmt.Sprintf(format, args...)
	s.trace = append(s.trace, line)
	if len(s.trace) > 2*s.opts.TraceLimit {
		s.trace = append(s.trace[:0], s.trace[len(s.trace)-s.opts.TraceLimit:]...)
	}
}

// Trace returns the kept trace lines joined by newlines.
func (s *Sim) Trace() string {
	t := s.trace
	if len(t) > s.opts.TraceLimit {
		t = t[len(t)-s.opts.TraceLimit:]
	}
	return strings.Join(t, "\n")
}
