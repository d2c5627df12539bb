package udp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// Client requests (`lanleader trigger`): a client broadcasts a TRIGGER
// whose payload is an application request; the leader's application
// answers through Config.OnRequest and the leader sends a TRIGGER_ANSWER.
// The protocol drops replays (the same sender, incarnation and nonce within
// a minute, on every node) and rate-limits them like client queries.

// ClientRequest is a client's request the leader accepted, for
// Config.OnRequest.
type ClientRequest struct {
	// From is the client's id (a random one per request), Addr where the
	// request came from.
	From string
	Addr netip.AddrPort
	// Payload is the application's request (padded with zeros).
	Payload []byte
}

// RequestAnswer is a leader's answer to Request.
type RequestAnswer struct {
	// Leader is the answering leader's id, Term its term.
	Leader string
	Term   uint64
	// Payload is the application's answer.
	Payload []byte
	// Addr is where it came from.
	Addr string
}

// Request broadcasts payload (at most protocol.ClientQueryPad bytes; it is
// padded with zeros to that size) as a client TRIGGER on t and returns the
// first answer, or ctx's error if none came. Each call is a new request
// (fresh sender id, incarnation and nonce). It does not close t.
func Request(ctx context.Context, t Transport, cluster string, keyring *wire.Keyring, payload []byte) (RequestAnswer, error) {
	if len(payload) > protocol.ClientQueryPad {
		return RequestAnswer{}, fmt.Errorf("udp: request payload %d bytes, max %d", len(payload), protocol.ClientQueryPad)
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	m := protocol.Message{
		Type:        protocol.Trigger,
		Cluster:     cluster,
		From:        fmt.Sprintf("trigger-%08x", r.Uint32()),
		Incarnation: protocol.NewIncarnation(time.Now().UnixMilli(), uint16(r.Uint32())),
		Seq:         1,
		Flags:       protocol.FlagClient,
		Nonce:       r.Uint64() | 1,
		// Padded, so the answer is never larger than the request.
		Payload: append(append(make([]byte, 0, protocol.ClientQueryPad), payload...), make([]byte, protocol.ClientQueryPad-len(payload))...),
	}
	b, err := wire.Encode(m, keyring)
	if err != nil {
		return RequestAnswer{}, fmt.Errorf("udp: encode request: %w", err)
	}
	if err := t.Broadcast(b); err != nil {
		return RequestAnswer{}, fmt.Errorf("udp: send request: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			return RequestAnswer{}, ctx.Err()
		case p, ok := <-t.Packets():
			if !ok {
				return RequestAnswer{}, fmt.Errorf("udp: request: transport closed")
			}
			a, err := wire.Decode(p.Data, keyring)
			if err != nil || a.Type != protocol.TriggerAnswer || a.Cluster != cluster || a.Nonce != m.Nonce {
				continue // not an answer to this request
			}
			return RequestAnswer{Leader: a.From, Term: a.Term, Payload: a.Payload, Addr: p.From.String()}, nil
		}
	}
}

// serveRequests hands the client requests the protocol accepted to
// Config.OnRequest and queues the answers. Called on the run loop without
// e.mu held: OnRequest may call back into the Elector (CanActAsLeader).
func (e *Elector) serveRequests() bool {
	e.mu.Lock()
	reqs := e.node.ClientRequests()
	e.mu.Unlock()
	if e.cfg.OnRequest == nil || len(reqs) == 0 {
		return false
	}
	for _, r := range reqs {
		e.mu.Lock()
		addr := e.addrs[r.From]
		e.mu.Unlock()
		ans := e.cfg.OnRequest(ClientRequest{From: r.From, Addr: addr, Payload: r.Payload})
		if ans == nil {
			continue
		}
		e.mu.Lock()
		sent := e.node.Reply(r, ans)
		e.mu.Unlock()
		if !sent {
			e.log.Warn("client request not answered: no longer leading, or answer larger than the request",
				"from", r.From, "answer_size", len(ans))
		}
	}
	return true
}
