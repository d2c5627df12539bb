package udptest

import (
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Leader probes in the simulator (Options.Probes): a node's probe of a
// leader whose process crashed while its host stays up is answered, one
// round trip later, by "port unreachable" (LeaderUnreachable), as a real
// host's kernel answers with ICMP. A live leader, a paused one, and a host
// that is down (HostDown) answer nothing; a cut link carries no answer.

// probeState is one node's pending probe event.
type probeState struct {
	gen uint64
	at  time.Time
}

// HostDown crashes id and takes its host off the network: unlike Crash,
// probes of it go unanswered, as when a host loses power or its cable.
// Restart boots it again with its host up.
func (s *Sim) HostDown(id string) {
	sn := s.mustNode(id)
	s.Crash(id)
	sn.hostDown = true
	s.logf("%s host down", id)
}

// Unreachable tells id that its probe of leader (in term) found the port
// closed, as a forged ICMP error would; the node reacts as to a real one.
func (s *Sim) Unreachable(id, leader string, term uint64) {
	sn := s.mustNode(id)
	if !sn.up || sn.paused {
		return
	}
	s.logf("%s told %s unreachable term=%x", id, leader, term)
	sn.n.LeaderUnreachable(s.nodeNow(sn), leader, term)
	s.after(sn)
}

// scheduleProbe (re)schedules sn's next probe event.
func (s *Sim) scheduleProbe(sn *simNode) {
	if !s.opts.Probes {
		return
	}
	at := sn.n.ProbeAt()
	if at.IsZero() || at.Equal(sn.probe.at) {
		return
	}
	sn.probe.gen++
	sn.probe.at = at
	at = s.toSim(sn, at)
	if at.Before(s.now) {
		at = s.now
	}
	s.push(&event{at: at, kind: evProbe, node: sn.id, gen: sn.probe.gen})
}

// handleProbe runs a due probe of sn and schedules its answer.
func (s *Sim) handleProbe(e *event) {
	sn := s.nodes[e.node]
	if !sn.up || e.gen != sn.probe.gen {
		return
	}
	sn.probe.at = time.Time{} // Resume's after() schedules it again
	if sn.paused {
		return
	}
	req, ok := sn.n.Probe(s.nodeNow(sn))
	if ok {
		s.Counters.Probes++
		s.answerProbe(sn, req)
	}
	s.after(sn)
}

// answerProbe delivers "unreachable" to sn if req's leader's process is down
// while its host is up and the link both ways is open.
func (s *Sim) answerProbe(sn *simNode, req protocol.ProbeRequest) {
	target := s.nodes[req.Leader]
	if target == nil || target.up || target.hostDown || s.cut[sn.id][req.Leader] || s.cut[req.Leader][sn.id] {
		return
	}
	life := sn.starts
	rtt := 2 * s.link.Delay
	s.At(s.now.Add(rtt), func() {
		if sn.starts != life {
			return // sn restarted: the probe's socket is gone
		}
		s.Unreachable(sn.id, req.Leader, req.Term)
	})
}
