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
	// Send is which send of the request it answers: 1 for the first.
	Send int
}

// Resend is when Request sends a request again while no answer came: First
// after the first send, then after each wait twice the last, at most Max.
// The zero Resend sends once.
type Resend struct {
	First, Max time.Duration
}

// DefaultResend sends a request again after 200 ms, 400 ms, 800 ms, then
// every 1.6 s: a lost frame costs a fifth of a second, and a client that
// waits 2 s sends four times.
var DefaultResend = Resend{First: 200 * time.Millisecond, Max: 1600 * time.Millisecond}

// after returns the wait before the send after one that waited last.
func (r Resend) after(last time.Duration) time.Duration {
	return min(2*last, max(r.Max, r.First))
}

// Request broadcasts payload (at most protocol.ClientQueryPad bytes; it is
// padded with zeros to that size) as a client TRIGGER on t and returns the
// first answer, or ctx's error if none came. While no answer came it sends
// the request again on resend's backoff, as a fresh request: the same
// sender id and incarnation, the next sequence number and a new nonce,
// since every node drops a nonce it has seen. An answer to any of the sends
// is taken (RequestAnswer.Send says which), so the leader may act on each
// of them: resend only a request that is safe to repeat. Each call is a
// new request (fresh sender id and incarnation). It does not close t.
func Request(ctx context.Context, t Transport, cluster string, keyring *wire.Keyring, payload []byte, resend Resend) (RequestAnswer, error) {
	if len(payload) > protocol.ClientQueryPad {
		return RequestAnswer{}, fmt.Errorf("udp: request payload %d bytes, max %d", len(payload), protocol.ClientQueryPad)
	}
	c := newClientRequest(cluster, payload)
	if err := c.send(t, keyring); err != nil {
		return RequestAnswer{}, err
	}
	var timer *time.Timer
	var again <-chan time.Time // nil: never sent again
	wait := resend.First
	if wait > 0 {
		timer = time.NewTimer(wait)
		defer timer.Stop()
		again = timer.C
	}
	// A failed resend is one more lost frame: the request is out already,
	// and the error is told only if no answer comes.
	var resendErr error
	for {
		select {
		case <-ctx.Done():
			if resendErr != nil {
				return RequestAnswer{}, fmt.Errorf("%w (%w)", ctx.Err(), resendErr)
			}
			return RequestAnswer{}, ctx.Err()
		case <-again:
			if err := c.send(t, keyring); err != nil {
				resendErr = err
			}
			wait = resend.after(wait)
			timer.Reset(wait)
		case p, ok := <-t.Packets():
			if !ok {
				return RequestAnswer{}, fmt.Errorf("udp: request: transport closed")
			}
			a, err := wire.Decode(p.Data, keyring)
			if err != nil || a.Type != protocol.TriggerAnswer || a.Cluster != cluster || c.sends[a.Nonce] == 0 {
				continue // not an answer to this request
			}
			return RequestAnswer{Leader: a.From, Term: a.Term, Payload: a.Payload, Addr: p.From.String(), Send: c.sends[a.Nonce]}, nil
		}
	}
}

// clientRequest is the TRIGGER one Request sends, once or again.
type clientRequest struct {
	m     protocol.Message
	rand  *rand.Rand
	sends map[uint64]int // nonce → which send carried it (1 for the first)
}

// newClientRequest makes a TRIGGER with a throwaway sender id and
// incarnation (nodes do not remember clients) and the payload, padded.
func newClientRequest(cluster string, payload []byte) *clientRequest {
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	return &clientRequest{rand: r, sends: make(map[uint64]int), m: protocol.Message{
		Type:        protocol.Trigger,
		Cluster:     cluster,
		From:        fmt.Sprintf("trigger-%08x", r.Uint32()),
		Incarnation: protocol.NewIncarnation(time.Now().UnixMilli(), uint16(r.Uint32())),
		Flags:       protocol.FlagClient,
		// Padded, so the answer is never larger than the request.
		Payload: append(append(make([]byte, 0, protocol.ClientQueryPad), payload...), make([]byte, protocol.ClientQueryPad-len(payload))...),
	}}
}

// send broadcasts the request with the next sequence number and a nonce
// of its own (never zero: zero means "no nonce").
func (c *clientRequest) send(t Transport, keyring *wire.Keyring) error {
	c.m.Seq++
	for c.m.Nonce = c.rand.Uint64() | 1; c.sends[c.m.Nonce] != 0; c.m.Nonce = c.rand.Uint64() | 1 {
	}
	b, err := wire.Encode(c.m, keyring)
	if err != nil {
		return fmt.Errorf("udp: encode request: %w", err)
	}
	c.sends[c.m.Nonce] = len(c.sends) + 1
	if err := t.Broadcast(b); err != nil {
		return fmt.Errorf("udp: send request: %w", err)
	}
	return nil
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
