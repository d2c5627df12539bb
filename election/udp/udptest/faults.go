package udptest

import (
	"fmt"
	"strings"
	"time"
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
	sn.up, sn.paused, sn.buffered = false, false, nil
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
	s.logf("%s pause", id)
	s.checkKnown()
}

// Resume thaws id: the overdue tick and the buffered deliveries run now,
// in a seeded order (a real process may see either first).
func (s *Sim) Resume(id string) {
	sn := s.mustNode(id)
	if !sn.up || !sn.paused {
		return
	}
	sn.paused, sn.asleep = false, false
	s.logf("%s resume (%d buffered)", id, len(sn.buffered))
	buf := sn.buffered
	sn.buffered = nil
	tickFirst := s.rng.IntN(2) == 0
	if tickFirst {
		sn.n.Tick(s.nodeNow(sn))
		s.after(sn)
	}
	for _, m := range buf {
		if !sn.up || sn.paused {
			return
		}
		sn.n.Step(s.nodeNow(sn), m)
		s.after(sn)
	}
	if !tickFirst {
		sn.n.Tick(s.nodeNow(sn))
		s.after(sn)
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
