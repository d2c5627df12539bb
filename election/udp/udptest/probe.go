package udptest

import (
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Leader probes in the simulator: every node's PROBE is delivered like
// any message, and a live leader answers it. With Options.Probes, a PROBE
// to a leader whose process crashed while its host stays up is also
// answered, one round trip later, by "port unreachable"
// (LeaderUnreachable), as a real host's kernel answers with ICMP. A
// paused leader and a host that is down (HostDown) answer nothing; a cut
// link carries no answer.

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

// answerProbe delivers "unreachable" to sn if req's leader's process is down
// while its host is up and the link both ways is open (Options.Probes).
func (s *Sim) answerProbe(sn *simNode, req protocol.ProbeRequest) {
	if !s.opts.Probes {
		return
	}
	s.Counters.Probes++
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
