package statefile

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkReplaySave is the idle node's periodic save: only the replay
// table changed (one peer's sequence number).
func BenchmarkReplaySave(b *testing.B) {
	s, _, err := Open(b.TempDir(), nil)
	require.NoError(b, err)
	require.NoError(b, s.Update(func(st *State) { *st = sample() }))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := s.Update(func(st *State) {
			st.Peers = append([]Peer(nil), st.Peers...)
			st.Peers[0].Seq++
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStateSave is a save of a new round: the state file, fsynced.
func BenchmarkStateSave(b *testing.B) {
	s, _, err := Open(b.TempDir(), nil)
	require.NoError(b, err)
	require.NoError(b, s.Update(func(st *State) { *st = sample() }))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Update(func(st *State) { st.Round++ }); err != nil {
			b.Fatal(err)
		}
	}
}
