package udp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/internal/proctest"
)

// TestUDPHandOffCallsInsteadOfQueueing: after HandOff, every packet goes to
// the function, in order and whole, and none is queued on Packets.
func TestUDPHandOffCallsInsteadOfQueueing(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	ts := loopbackCluster(t, 2, nil)
	a, b := ts[0], ts[1]
	got := make(chan Packet, 16)
	a.HandOff(func(p Packet) {
		p.Data = append([]byte(nil), p.Data...) // only valid during the call
		got <- p
	})
	// More than one receive batch, queued before the reader wakes.
	const n = 2*readBatch + 1
	for i := range n {
		require.NoError(t, b.SendTo([]byte{byte(i), 'x'}, a.LocalAddr()))
	}
	guard := time.NewTimer(10 * time.Second) // a hang guard only
	defer guard.Stop()
	for i := range n {
		select {
		case p := <-got:
			assert.Equal(t, []byte{byte(i), 'x'}, p.Data)
			assert.Equal(t, b.LocalAddr(), p.From)
		case <-guard.C:
			require.FailNow(t, "packet not handed over", "packet %d of %d", i, n)
		}
	}
	require.NoError(t, a.Close())
	_, ok := <-a.Packets()
	assert.False(t, ok, "nothing was queued, and Packets is closed after Close")
	assert.Equal(t, uint64(n), a.Stats().PacketsIn)
	require.NoError(t, b.Close())
}
