package protocol

import "time"

// peer is what we remember about one sender, for replay protection and
// successor choice.
type peer struct {
	incarnation uint64
	seq         uint64
	priority    uint8
	lastHeard   time.Time
	// gone is set when the peer resigned: do not name it successor.
	gone bool
}

// admit applies the replay rules to a message from m.From and records it.
// It returns the drop reason, or "" if the message is fresh.
//
// Rules, per sender id:
//   - same incarnation: Seq must strictly grow;
//   - higher incarnation: the sender restarted; accepted, Seq restarts;
//   - lower incarnation: dropped, unless the sender has been silent for
//     ForgetPeerAfter (its clock went back across a restart).
//
// A client's Query (FlagClient) is admitted without being recorded.
func (n *Node) admit(now time.Time, m *Message) DropReason {
	if isClientQuery(m) {
		return ""
	}
	p, ok := n.peers[m.From]
	if !ok {
		if len(n.peers) >= n.cfg.MaxPeers {
			n.evictOldestPeer()
		}
		n.peers[m.From] = &peer{incarnation: m.Incarnation, seq: m.Seq, priority: m.Priority, lastHeard: now}
		return ""
	}
	switch {
	case m.Incarnation == p.incarnation:
		if m.Seq <= p.seq {
			return DropStaleSeq
		}
	case m.Incarnation < p.incarnation:
		if now.Sub(p.lastHeard) < n.cfg.ForgetPeerAfter {
			return DropStaleIncarnation
		}
	}
	p.incarnation, p.seq, p.priority, p.lastHeard = m.Incarnation, m.Seq, m.Priority, now
	p.gone = m.Type == Resign
	return ""
}

func (n *Node) evictOldestPeer() {
	var oldest string
	var at time.Time
	first := true
	for id, p := range n.peers {
		if first || p.lastHeard.Before(at) || (p.lastHeard.Equal(at) && id < oldest) {
			oldest, at, first = id, p.lastHeard, false
		}
	}
	delete(n.peers, oldest)
}

// successor picks the peer a resigning leader hands over to: the best
// (priority, id) among known peers that have not resigned. Followers are
// silent in this protocol, so the leader knows them from their start-up
// queries and claims, possibly long ago; a dead pick only costs one
// ClaimWindow, after which the others claim by backoff.
func (n *Node) successor() string {
	best := ""
	var bp uint8
	for id, p := range n.peers {
		if p.gone {
			continue
		}
		if best == "" || p.priority > bp || (p.priority == bp && id > best) {
			best, bp = id, p.priority
		}
	}
	return best
}

// isClientQuery reports whether m is a client's "who leads?" rather than a
// node's message.
func isClientQuery(m *Message) bool { return m.Type == Query && m.Flags&FlagClient != 0 }
