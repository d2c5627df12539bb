package protocol

import (
	"slices"
	"strings"
	"time"
)

// Durable is the part of a Node's state that must survive a restart of
// every node at once (a power cut): the highest round and term this node
// used or saw, the binding of its last quorum grant, and its replay table.
// A node resumed from it (Config.Resume) claims above that round, so terms
// — fencing tokens — keep growing across a full-cluster restart instead of
// starting over at round 1; it keeps its promise to the candidate it last
// granted; and it drops old packets of the peers it knew.
//
// DurableVersion says when to persist it: Round, MaxTerm and Grant before
// sending what the Node queued with their change (a CLAIM of a new round,
// a VOTE or ACK binding a new candidate must not leave before they are on
// disk); Peers, which change with every packet, at the caller's cadence.
type Durable struct {
	Round   uint64
	MaxTerm uint64
	// Grant is the (term, candidate) of this node's last VOTE or ACK in
	// quorum mode, its own claim included; zero if none. It changes when
	// the node binds itself to another term or candidate, not when an ACK
	// renews the same binding.
	Grant Grant
	// Peers is the replay table: per sender the newest incarnation and
	// sequence number accepted, most recently heard first; at most
	// Config.MaxPeers entries.
	Peers []PeerSeq
}

// Grant is the binding of a quorum vote or ack: while it is in force the
// node votes and acks for nobody but To, at Term or later.
type Grant struct {
	Term uint64
	To   string
	// Promise is how long a node restarted from it keeps its start-up
	// promise: the longest promise that may still have been in force
	// (its own, or one resumed and not yet run out), so that a restart
	// with a shorter promise keeps the longer one made before. Zero
	// (a file of an older version): the node's own promise.
	Promise time.Duration
}

// PeerSeq is one replay table entry: the newest Incarnation and Seq
// accepted from node ID.
type PeerSeq struct {
	ID          string
	Incarnation uint64
	Seq         uint64
}

// durableCore is the part of Durable saved before sending.
type durableCore struct {
	round, maxTerm uint64
	grant          Grant
}

// Durable returns the state to persist. It copies the replay table; call
// it when saving, not on every packet (DurableVersion says when).
func (n *Node) Durable() Durable {
	d := Durable{Round: n.round, MaxTerm: n.maxTerm, Grant: n.q.binding()}
	if len(n.peers) == 0 {
		return d
	}
	type entry struct {
		PeerSeq
		p *peer
	}
	es := make([]entry, 0, len(n.peers))
	for id, p := range n.peers {
		es = append(es, entry{PeerSeq{ID: id, Incarnation: p.incarnation, Seq: p.seq}, p})
	}
	slices.SortFunc(es, func(a, b entry) int {
		if c := b.p.lastHeard.Compare(a.p.lastHeard); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	d.Peers = make([]PeerSeq, len(es))
	for i, e := range es {
		d.Peers[i] = e.PeerSeq
	}
	return d
}

// DurableVersion returns two counters: state changes when Round, MaxTerm
// or Grant changed since the last call — persist Durable before sending
// what Ready returns —, replay whenever the replay table changed (every
// accepted packet): persist it now and then, and at shutdown.
func (n *Node) DurableVersion() (state, replay uint64) {
	if c := (durableCore{n.round, n.maxTerm, n.q.binding()}); c != n.durCore {
		n.durCore = c
		n.durVer++
	}
	return n.durVer, n.replayVer
}

// resume takes up a persisted Durable (Config.Resume); the grant is taken
// up by newQuorumTracker.
func (n *Node) resume(d Durable) {
	n.observeTerm(max(d.MaxTerm, d.Grant.Term))
	if d.Round > n.round && d.Round <= MaxRound {
		n.round = d.Round
	}
	n.resumePeers(d.Peers)
}

// resumedGrant is g if it can bind a start-up promise, else a binding to
// nobody, keeping the promise (up to maxResumedPromise) either way: the
// previous life may have promised that long to anyone.
func resumedGrant(g Grant) Grant {
	p := min(max(g.Promise, 0), maxResumedPromise)
	if g.To == "" || len(g.To) > maxIDLen || TermRound(g.Term) == 0 {
		return Grant{Promise: p}
	}
	g.Promise = p
	return g
}

// maxResumedPromise bounds the start-up promise a state file can ask for,
// so that a damaged value cannot keep a node from voting for days.
const maxResumedPromise = time.Hour
