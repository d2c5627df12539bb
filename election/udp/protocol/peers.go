package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// peer is what we remember about one sender, for replay protection and
// successor choice.
type peer struct {
	incarnation uint64
	seq         uint64
	priority    uint8
	lastHeard   time.Time
	// gone is set when the peer resigned: do not name it successor.
	gone bool
	// promise is what its latest VOTE or ACK promised (zero: none yet, or
	// not said).
	promise time.Duration
	// witness: its latest message said it is a witness (FlagWitness): it
	// never claims.
	witness bool
	// prevInc and prevSeq are the incarnation this id had before the
	// current one, still admitted while it keeps sending fresh sequence
	// numbers: two live processes with one id (a misconfiguration) are
	// both heard, so the older one's leadership is not lost to replay
	// protection; a restarted process's old packets replayed stay stale.
	prevInc, prevSeq uint64
	prevHeard        time.Time
	// resumed: the entry comes from the state file (Config.Resume) and
	// the peer has not been heard since. It is a replay floor only: not
	// counted as heard, never named successor. Its lastHeard is the
	// restart, so a lower incarnation is accepted ForgetPeerAfter after
	// it, as from a peer silent that long.
	resumed bool
	// probeWindow starts the interval in which probeAnswers answers to
	// this peer's probes were sent (probe.go).
	probeWindow  time.Time
	probeAnswers int
}

// admit applies the replay rules to a message from m.From and records it.
// It returns the drop reason, or "" if the message is fresh.
//
// Rules, per sender id:
//   - same incarnation: Seq must strictly grow;
//   - higher incarnation: the sender restarted; accepted, Seq restarts;
//   - lower incarnation: dropped, unless the sender has been silent for
//     ForgetPeerAfter (its clock went back across a restart), or it is
//     the incarnation just before the current one and its Seq grows (two
//     processes share the id: both are heard; see Hearing.Duplicate).
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
		n.replayVer++
		n.newPeer = true
		return ""
	}
	switch {
	case m.Incarnation == p.incarnation:
		if m.Seq <= p.seq {
			return DropStaleSeq
		}
	case m.Incarnation == p.prevInc && now.Sub(p.prevHeard) < n.cfg.ForgetPeerAfter:
		if m.Seq <= p.prevSeq {
			return DropStaleSeq
		}
		p.prevSeq, p.prevHeard = m.Seq, now
		return ""
	case m.Incarnation < p.incarnation:
		if now.Sub(p.lastHeard) < n.cfg.ForgetPeerAfter {
			return DropStaleIncarnation
		}
	case m.Incarnation > p.incarnation:
		p.prevInc, p.prevSeq, p.prevHeard = p.incarnation, p.seq, p.lastHeard
		n.newPeer = true
	}
	p.incarnation, p.seq, p.priority, p.lastHeard = m.Incarnation, m.Seq, m.Priority, now
	p.gone, p.resumed = m.Type == Resign, false
	n.replayVer++
	return ""
}

// resumePeers takes up a replay table saved in a previous life
// (Durable.Peers, most recently heard first): each entry is a floor, so a
// packet captured before the save and replayed now is dropped. Packets
// sent after the save are not covered until their sender's next packet.
// The restart time stands in for when each peer was last heard: no time
// from the previous life is trusted after a reboot.
func (n *Node) resumePeers(ps []PeerSeq) {
	for _, e := range ps {
		if len(n.peers) >= n.cfg.MaxPeers {
			return
		}
		if e.ID == "" || len(e.ID) > maxIDLen || e.ID == n.cfg.NodeID || e.Incarnation == 0 || n.peers[e.ID] != nil {
			continue
		}
		n.peers[e.ID] = &peer{incarnation: e.Incarnation, seq: e.Seq, lastHeard: n.now, resumed: true}
	}
}

// peerRecent reports whether p was heard within ForgetPeerAfter before
// now, in this life.
func (n *Node) peerRecent(now time.Time, p *peer) bool {
	return !p.resumed && now.Sub(p.lastHeard) < n.cfg.ForgetPeerAfter
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
	n.replayVer++
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
		if p.gone || p.resumed || p.witness {
			continue
		}
		if best == "" || p.priority > bp || (p.priority == bp && id > best) {
			best, bp = id, p.priority
		}
	}
	return best
}

// introduce answers a starting node's QUERY with a unicast presence report
// (a QUERY with FlagReport, which nobody answers). A node hears the
// followers that start after it, but followers are otherwise silent: it
// would never learn those that started before it, and it ranks itself
// among the peers it knows when its leader's process dies (rankWait). Only
// followers outside quorum mode introduce themselves: a leader answers the
// query anyway, and quorum mode does not rank.
func (n *Node) introduce(to string) {
	if n.q.on() || n.role != election.Follower {
		return
	}
	n.emit(to, Message{Type: Query, Flags: FlagReport, Leader: n.leader.ID})
}

// isClientQuery reports whether m is a client's "who leads?" rather than a
// node's message.
// A client's Trigger (`lanleader trigger`) is handled the same way.
func isClientQuery(m *Message) bool {
	return (m.Type == Query || m.Type == Trigger) && m.Flags&FlagClient != 0
}
