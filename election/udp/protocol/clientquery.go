package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// Client queries (`lanleader who`, FlagClient) are answered by the leader
// and touch nothing else: no term, peer, detector or election state. They
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

// stepClientQuery answers a client's Query when leading, or says why not.
func (n *Node) stepClientQuery(now time.Time, m *Message) DropReason {
	switch {
	case m.Nonce == 0 || len(m.Payload) < ClientQueryPad:
		return DropMalformed
	case n.role != election.Leader:
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
	c.tokens = min(clientBurst, c.tokens+float64(now.Sub(c.refilled))/float64(clientRefill))
	c.refilled = now
	if c.tokens < 1 {
		return DropRateLimited
	}
	c.tokens--
	if len(c.seen) >= maxClients {
		for k, at := range c.seen {
			if now.Sub(at) >= clientReplayWindow || len(c.seen) >= maxClients {
				delete(c.seen, k)
			}
		}
	}
	c.seen[k] = now
	n.emit(m.From, Message{Type: Answer, Term: n.leader.Term, Leader: n.cfg.NodeID, Nonce: m.Nonce})
	return ""
}
