package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// Client queries (`lanleader who`, FlagClient) are answered by the leader
// (and by a witness, with a report naming the leader it follows: `who`
// shows witnesses too) and touch nothing else: no term, peer, detector or
// election state. They
// cost the leader at most clientBurst answers at once and one per
// clientRefill after that, each no larger than the query (the query is
// padded, the answer carries no payload), and a replayed query is dropped.

// ClientQueryPad is the payload length a client Query must carry at least:
// padding that makes the query as large as any answer to it, so answering
// a query sent with a forged source address never amplifies it.
const ClientQueryPad = 3 * maxIDLen

const (
	// clientBurst answers may go out at once; then one per clientRefill.
	clientBurst  = 32
	clientRefill = 10 * time.Millisecond
	// clientReplayWindow is how long a client query's (From, Incarnation,
	// Nonce) is remembered; maxClients bounds that memory.
	clientReplayWindow = time.Minute
	maxClients         = 4096
)

type clientKey struct {
	from  string
	inc   uint64
	nonce uint64
}

// clientLimiter is the leader's bookkeeping for client queries.
type clientLimiter struct {
	tokens   float64
	refilled time.Time
	seen     map[clientKey]time.Time
}

// stepClientQuery answers a client's Query when leading, or hands a
// client's Trigger to the application (ClientRequests), or says why not.
// Every node remembers the Triggers it hears, leading or not, so that a
// replay sent to the next leader after a failover is dropped there too.
func (n *Node) stepClientQuery(now time.Time, m *Message) DropReason {
	switch {
	case m.Nonce == 0 || len(m.Payload) < ClientQueryPad:
		return DropMalformed
	case m.Type == Query && n.role != election.Leader && !n.cfg.Witness:
		return DropNotLeader
	}
	c := &n.clients
	if c.seen == nil {
		c.seen = make(map[clientKey]time.Time)
		c.tokens, c.refilled = clientBurst, now
	}
	k := clientKey{m.From, m.Incarnation, m.Nonce}
	if at, ok := c.seen[k]; ok && now.Sub(at) < clientReplayWindow {
		return DropReplayedQuery
	}
	if m.Type == Trigger && n.role != election.Leader {
		c.remember(now, k)
		return DropNotLeader
	}
	c.tokens = min(clientBurst, c.tokens+float64(now.Sub(c.refilled))/float64(clientRefill))
	c.refilled = now
	if c.tokens < 1 {
		return DropRateLimited
	}
	c.tokens--
	c.remember(now, k)
	if m.Type == Trigger {
		if len(n.requests) >= maxClientRequests {
			return DropRateLimited
		}
		n.requests = append(n.requests, ClientRequest{From: m.From, Nonce: m.Nonce, Payload: m.Payload})
		return ""
	}
	if n.role != election.Leader {
		// A witness: "I vote, and follow this leader".
		n.emit(m.From, Message{Type: Query, Flags: FlagReport, Term: n.leader.Term, Leader: n.leader.ID, Nonce: m.Nonce})
		return ""
	}
	n.emit(m.From, Message{Type: Answer, Term: n.leader.Term, Leader: n.cfg.NodeID, Nonce: m.Nonce})
	return ""
}

// remember records a client request's key, forgetting expired ones (or,
// when full, arbitrary ones) to stay within maxClients.
func (c *clientLimiter) remember(now time.Time, k clientKey) {
	if len(c.seen) >= maxClients {
		for old, at := range c.seen {
			if now.Sub(at) >= clientReplayWindow || len(c.seen) >= maxClients {
				delete(c.seen, old)
			}
		}
	}
	c.seen[k] = now
}

// maxClientRequests bounds the Triggers waiting for the application.
const maxClientRequests = 64

// ClientRequest is a client's Trigger for the application to act on and
// answer with Reply.
type ClientRequest struct {
	From    string
	Nonce   uint64
	Payload []byte
}

// ClientRequests returns the Triggers accepted since the last call, and
// forgets them.
func (n *Node) ClientRequests() []ClientRequest { return take(&n.requests) }

// Reply queues the TriggerAnswer to r carrying payload, if this node still
// leads. The answer must not be larger than the request (a forged source
// address must not make the leader an amplifier): a longer payload is not
// sent and Reply reports false.
func (n *Node) Reply(r ClientRequest, payload []byte) bool {
	if n.role != election.Leader || len(payload) > len(r.Payload) {
		return false
	}
	n.emit(r.From, Message{Type: TriggerAnswer, Term: n.leader.Term, Leader: n.cfg.NodeID, Nonce: r.Nonce, Payload: payload})
	return true
}
