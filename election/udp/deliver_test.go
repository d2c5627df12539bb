package udp

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// deliverPayload passes a payload again, changed or not, until it is kept:
// a payload OnPayload could not keep is never taken for delivered, and
// while the last call failed every payload is passed again, so that a
// later one (the leader's next heartbeat) retries the save.
func TestPayloadNotKeptIsPassedAgain(t *testing.T) {
	var calls []string
	fail := map[string]bool{}
	e := &Elector{delivered: map[string]protocol.PeerPayload{}}
	e.cfg.Protocol.NodeID = "me"
	e.cfg.OnPayload = func(h protocol.PeerPayload) error {
		calls = append(calls, h.From+":"+string(h.Payload))
		if fail[h.From+":"+string(h.Payload)] {
			return errors.New("cannot keep it")
		}
		return nil
	}
	heard := func(from, p string) bool {
		return e.deliverPayload(protocol.PeerPayload{From: from, Payload: []byte(p)})
	}

	assert.True(t, heard("l", "P"))
	assert.False(t, heard("l", "P"), "kept: not passed again")

	fail["x:Q"] = true
	assert.True(t, heard("x", "Q"))
	assert.True(t, e.unkept)
	assert.True(t, heard("l", "P"), "unchanged, but the save is retried through it")
	assert.False(t, e.unkept, "kept: acks may leave")

	fail["l:R"] = true
	assert.True(t, heard("l", "R"))
	assert.True(t, heard("y", "S"), "another sender's payload is kept")
	assert.False(t, e.unkept)
	assert.True(t, heard("l", "R"), "the leader's payload was never kept: passed again")
	assert.True(t, e.unkept, "and still not kept: no ack for it")
	assert.Equal(t, []string{"l:P", "x:Q", "l:P", "l:R", "y:S", "l:R"}, calls)
}
