package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/internal/statefile"
)

// What the udp Elector saves comes back, whole, as Resume after a restart;
// the job ledger beside it is kept.
func TestUDPStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	store, _, err := statefile.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, store.Update(func(st *statefile.State) { st.Ledger = []byte{1, 2} }))
	d := protocol.Durable{
		Round: 7, MaxTerm: protocol.MakeTerm(7, 100, 3),
		Grant: protocol.Grant{Term: protocol.MakeTerm(6, 100, 9), To: "b"},
		Peers: []protocol.PeerSeq{{ID: "b", Incarnation: 1 << 20, Seq: 99}, {ID: "c", Incarnation: 5, Seq: 1}},
	}
	require.NoError(t, udpSaver(store)(d))

	_, st, err := statefile.Open(dir, nil)
	require.NoError(t, err)
	assert.Equal(t, d, udpResume(st))
	assert.Equal(t, []byte{1, 2}, st.Ledger)
	assert.Equal(t, protocol.Durable{}, udpResume(statefile.State{}), "cold")
}
