package cli

import (
	"os"
	"path/filepath"
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
	defer store.Close()
	require.NoError(t, store.Update(func(st *statefile.State) { st.Ledger = []byte{1, 2} }))
	d := protocol.Durable{
		Round: 7, MaxTerm: protocol.MakeTerm(7, 100, 3),
		Grant: protocol.Grant{Term: protocol.MakeTerm(6, 100, 9), To: "b"},
		Peers: []protocol.PeerSeq{{ID: "b", Incarnation: 1 << 20, Seq: 99}, {ID: "c", Incarnation: 5, Seq: 1}},
	}
	require.NoError(t, store.SaveDurable(d))

	_, st, err := statefile.Open(dir, nil)
	require.NoError(t, err)
	assert.Equal(t, d, st.Durable())
	assert.Equal(t, []byte{1, 2}, st.Ledger)
	assert.Equal(t, protocol.Durable{}, statefile.State{}.Durable(), "cold")
}

// The udp Elector's periodic saves of the replay table alone leave the
// state file untouched; a save of a new round rewrites it. Resume takes
// per peer the newest floor saved, in whichever file it is, never one
// below the state file's.
func TestUDPReplaySavesSkipTheStateFile(t *testing.T) {
	dir := t.TempDir()
	store, _, err := statefile.Open(dir, nil)
	require.NoError(t, err)
	defer store.Close()
	save := store.SaveDurable
	d := protocol.Durable{
		Round: 7, MaxTerm: protocol.MakeTerm(7, 100, 3),
		Grant: protocol.Grant{Term: protocol.MakeTerm(7, 100, 3), To: "b"},
		Peers: []protocol.PeerSeq{{ID: "b", Incarnation: 10, Seq: 100}, {ID: "c", Incarnation: 20, Seq: 5}},
	}
	require.NoError(t, save(d))
	statePath := filepath.Join(dir, statefile.FileName)
	before, err := os.ReadFile(statePath)
	require.NoError(t, err)
	fi0, err := os.Stat(statePath)
	require.NoError(t, err)

	// Heartbeats from b: the replay table alone changes.
	for range 3 {
		d.Peers = []protocol.PeerSeq{{ID: "b", Incarnation: 10, Seq: d.Peers[0].Seq + 5}, d.Peers[1]}
		require.NoError(t, save(d))
	}
	after, err := os.ReadFile(statePath)
	require.NoError(t, err)
	fi1, err := os.Stat(statePath)
	require.NoError(t, err)
	assert.Equal(t, before, after, "state file rewritten for the replay table")
	assert.True(t, os.SameFile(fi0, fi1) && fi0.ModTime().Equal(fi1.ModTime()), "state file replaced")
	_, st, err := statefile.Open(dir, nil)
	require.NoError(t, err)
	assert.Equal(t, d, st.Durable(), "the newest floors")

	// A new round: the state file, with c's newer floor, which the replay
	// file does not have.
	d.Round++
	d.Peers = []protocol.PeerSeq{{ID: "c", Incarnation: 21, Seq: 1}, d.Peers[0]}
	require.NoError(t, save(d))
	after, err = os.ReadFile(statePath)
	require.NoError(t, err)
	assert.NotEqual(t, before, after)
	_, st, err = statefile.Open(dir, nil)
	require.NoError(t, err)
	got := st.Durable()
	assert.Equal(t, d.Round, got.Round)
	assert.ElementsMatch(t, d.Peers, got.Peers, "c's floor from the state file, not the replay file's older one")
}
