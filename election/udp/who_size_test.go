package udp

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// A leader's answer to a client is never larger than the client's query,
// even with the longest ids and evidence set: answering a query sent from a
// forged address reflects, but never amplifies.
func TestClientAnswerNoLargerThanQuery(t *testing.T) {
	q := clientQuery("c", rand.New(rand.NewPCG(1, 2)))
	id := strings.Repeat("n", wire.MaxIDLen)
	a := protocol.Message{Type: protocol.Answer, Cluster: q.Cluster, From: id, Leader: id,
		Incarnation: 1, Seq: 1, Term: ^uint64(0), Nonce: q.Nonce,
		Heard: protocol.Evidence{Term: 1, Beat: 1}}
	assert.LessOrEqual(t, wire.EncodedSize(a, nil), wire.EncodedSize(q, nil))
}
