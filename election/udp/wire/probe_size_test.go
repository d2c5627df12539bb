package wire

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// TestProbeAnswerNoLargerThanProbe: a leader's answer to a probe, as the
// protocol builds it, encodes to no more bytes than the probe, signed or
// not, whatever the ids' lengths: the answer cannot amplify traffic sent
// to a forged source address.
func TestProbeAnswerNoLargerThanProbe(t *testing.T) {
	k, err := NewKeyring([]byte(strings.Repeat("k", 32)))
	require.NoError(t, err)
	for _, ids := range [][2]string{{"l", "f"}, {strings.Repeat("L", MaxIDLen), "f"}, {"l", strings.Repeat("F", MaxIDLen)}} {
		probe, answer := probeExchange(t, ids[0], ids[1])
		for _, key := range []*Keyring{nil, k} {
			p, err := Encode(probe, key)
			require.NoError(t, err)
			a, err := Encode(answer, key)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(a), len(p), "leader %q, follower %q, signed %v", ids[0], ids[1], key != nil)
		}
	}
}

// probeExchange elects leader alone, lets follower hear its heartbeat and
// miss the next, and returns follower's probe and leader's answer.
func probeExchange(t *testing.T, leader, follower string) (probe, answer protocol.Message) {
	t.Helper()
	now := time.Unix(1000, 0)
	cfg := func(id string, seed uint64) protocol.Config {
		c := protocol.DefaultLANConfig()
		c.NodeID, c.Cluster, c.Priority = id, "backup-rack", 100
		c.Incarnation = protocol.NewIncarnation(1000, uint16(seed))
		c.Rand = rand.New(rand.NewPCG(seed, 7))
		return c
	}
	l, err := protocol.NewNode(cfg(leader, 1), now)
	require.NoError(t, err)
	for i := 0; i < 20 && l.Status().Role != election.Leader; i++ {
		now = l.NextTick()
		l.Tick(now)
	}
	require.Equal(t, election.Leader, l.Status().Role)
	l.Ready()
	f, err := protocol.NewNode(cfg(follower, 2), now)
	require.NoError(t, err)
	now = l.NextTick()
	l.Tick(now)
	for _, e := range l.Ready() {
		e.Msg.Addr = "192.0.2.1:7946"
		f.Step(now, e.Msg)
	}
	f.Ready()
	now = f.NextTick()
	f.Tick(now)
	for _, e := range f.Ready() {
		if e.Msg.Type == protocol.Probe {
			probe = e.Msg
		}
	}
	require.Equal(t, protocol.Probe, probe.Type)
	probe.Addr = "192.0.2.2:7946"
	l.Step(now, probe)
	for _, e := range l.Ready() {
		if e.Msg.Type == protocol.ProbeAnswer {
			answer = e.Msg
		}
	}
	require.Equal(t, protocol.ProbeAnswer, answer.Type)
	return probe, answer
}
