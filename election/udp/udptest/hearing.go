package udptest

import (
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// One-way faults of a node's own host, as a host firewall makes them: a
// deaf node receives nothing (its own broadcasts included, which a Linux
// host loops back through the same input path), a mute one sends nothing
// that reaches another node. Both can start at boot or mid-run; Hear or
// Heal ends them.

// echoDelay is how long a broadcast takes to loop back to its sender.
const echoDelay = 10 * time.Microsecond

// Deaf makes id receive nothing from now on.
func (s *Sim) Deaf(id string) {
	s.mustNode(id)
	if !s.deaf[id] {
		s.deaf[id], s.deafAt[id] = true, s.now
	}
	s.MarkDirty("deaf")
	s.logf("%s deaf", id)
}

// Mute makes everything id sends get lost on the way to other nodes.
func (s *Sim) Mute(id string) {
	s.mustNode(id)
	s.mute[id] = true
	s.MarkDirty("mute")
	s.logf("%s mute", id)
}

// Hear ends id's deafness and muteness.
func (s *Sim) Hear(id string) {
	delete(s.deaf, id)
	delete(s.deafAt, id)
	delete(s.mute, id)
	s.logf("%s hears and speaks again", id)
}

// IsDeaf reports whether id is deaf now.
func (s *Sim) IsDeaf(id string) bool { return s.deaf[id] }

// Deliver hands m to id now, as if it came from outside the cluster (a
// `lanleader who` client, an attacker's packet).
func (s *Sim) Deliver(id string, m protocol.Message) {
	s.push(&event{at: s.now, kind: evDeliver, node: id, msg: m})
}

// dropped reports whether a delivery from → to is lost to a cut, a deaf
// receiver or a mute sender (its own echo excepted).
func (s *Sim) dropped(from, to string) bool {
	return s.cut[from][to] || s.deaf[to] || (s.mute[from] && from != to)
}

// checkDeaf enforces the deaf-node invariants: in quorum mode a node deaf
// for longer than a promise period (a lease it held when it went deaf runs
// out within that, unrenewed) never acts as leader; with SelfEcho a node deaf for longer than a claim
// window never becomes leader (it cannot have heard its own claim).
func (s *Sim) checkDeaf(sn *simNode, becameLeader bool) {
	if s.opts.NoCheck || !s.deaf[sn.id] {
		return
	}
	c := s.opts.Base
	t := c.Timings()
	if c.ClusterSize > 0 && s.now.Sub(s.deafAt[sn.id]) > t.MaxPromise && sn.n.CanActAsLeader(s.nodeNow(sn)) {
		s.fail("%s is deaf and may act as leader in quorum mode", sn.id)
	}
	if becameLeader && sn.echo && s.now.Sub(s.deafAt[sn.id]) > t.ClaimWindow {
		s.fail("%s became leader although deaf since %v (SelfEcho)", sn.id, s.deafAt[sn.id].Sub(s.start))
	}
}
