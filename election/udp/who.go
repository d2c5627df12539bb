package udp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// Answer is a leader's reply to a Query, or a witness's.
type Answer struct {
	// Leader is the answering leader's node id; for a witness, the leader
	// it follows ("" if none).
	Leader string
	// Term is the leader's term.
	Term uint64
	// Witness is the answering witness's node id; "" for a leader.
	Witness string
	// Addr is the address the answer came from.
	Addr string
	// RTT is the time from sending the query to receiving this answer.
	RTT time.Duration
}

// Query asks the cluster who leads: it broadcasts a QUERY on t and collects
// ANSWERs until ctx is done. It returns every distinct leader that answered,
// in order of arrival (more than one means a split brain in progress), and
// every witness (Answer.Witness), which answers with the leader it follows.
// It does not close t.
func Query(ctx context.Context, t Transport, cluster string, keyring *wire.Keyring) ([]Answer, error) {
	q := clientQuery(cluster, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())))
	b, err := wire.Encode(q, keyring)
	if err != nil {
		return nil, fmt.Errorf("udp: encode query: %w", err)
	}
	sent := time.Now()
	if err := t.Broadcast(b); err != nil {
		return nil, fmt.Errorf("udp: send query: %w", err)
	}
	var answers []Answer
	seen := make(map[string]bool)
	for {
		select {
		case <-ctx.Done():
			return answers, nil
		case p, ok := <-t.Packets():
			if !ok {
				return answers, nil
			}
			m, err := wire.Decode(p.Data, keyring)
			if err != nil || m.Cluster != cluster || m.Nonce != q.Nonce {
				continue // not an answer to this query (a replayed or stray one)
			}
			a := Answer{Leader: m.From, Term: m.Term, Addr: p.From.String(), RTT: p.At.Sub(sent)}
			switch witness := protocol.FlagReport | protocol.FlagWitness; {
			case m.Type == protocol.Query && m.Flags&witness == witness:
				a.Leader, a.Witness = m.Leader, m.From
			case m.Type != protocol.Answer:
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", a.Witness, m.From, m.Term)
			if seen[key] {
				continue
			}
			seen[key] = true
			answers = append(answers, a)
		}
	}
}

// clientQuery builds a `who` QUERY: a throwaway id and incarnation (nodes
// do not remember clients), a nonce the answer must echo, and padding.
func clientQuery(cluster string, r *rand.Rand) protocol.Message {
	return protocol.Message{
		Type:        protocol.Query,
		Cluster:     cluster,
		From:        fmt.Sprintf("who-%08x", r.Uint32()),
		Incarnation: protocol.NewIncarnation(time.Now().UnixMilli(), uint16(r.Uint32())),
		Seq:         1,
		Flags:       protocol.FlagClient,
		Nonce:       r.Uint64() | 1, // never zero: zero means "no nonce"
		// Padding: nodes answer only queries at least as large as the
		// answer, so a forged source address gains no amplification.
		Payload: make([]byte, protocol.ClientQueryPad),
	}
}
