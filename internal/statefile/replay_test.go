package statefile

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openT opens dir's Store, logging into logs if not nil, and closes it
// at the end of the test.
func openT(t *testing.T, dir string, logs *bytes.Buffer) (*Store, State) {
	t.Helper()
	var log *slog.Logger
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, nil))
	}
	s, st, err := Open(dir, log)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, st
}

// recordSyncs records the paths fsynced until the test ends.
func recordSyncs(t *testing.T) *[]string {
	var paths []string
	onSync = func(p string) { paths = append(paths, p) }
	t.Cleanup(func() { onSync = nil })
	return &paths
}

// bump returns an Update function moving peer i's floor up by n.
func bump(i int, n uint64) func(*State) {
	return func(st *State) {
		st.Peers = append([]Peer(nil), st.Peers...)
		st.Peers[i].Seq += n
	}
}

// A save of the replay table alone leaves the state file alone (same
// inode, bytes and mtime), fsyncs nothing, and comes back after a restart.
func TestReplayOnlySaveLeavesStateFile(t *testing.T) {
	dir := t.TempDir()
	s, _ := openT(t, dir, nil)
	require.NoError(t, s.Update(func(st *State) { *st = sample() }))
	p := filepath.Join(dir, FileName)
	before, err := os.Stat(p)
	require.NoError(t, err)
	bytesBefore, err := os.ReadFile(p)
	require.NoError(t, err)
	syncs := recordSyncs(t)

	for range 3 {
		require.NoError(t, s.Update(bump(0, 1)))
	}
	after, err := os.Stat(p)
	require.NoError(t, err)
	bytesAfter, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "state file replaced")
	assert.Equal(t, before.ModTime(), after.ModTime(), "state file written")
	assert.Equal(t, bytesBefore, bytesAfter)
	assert.Empty(t, *syncs, "replay saves are not fsynced")
	require.FileExists(t, filepath.Join(dir, ReplayFileName))

	want := sample()
	want.Peers[0].Seq += 3
	assert.Equal(t, want, s.State())
	_, st := openT(t, dir, nil)
	assert.Equal(t, want, st, "the newest floor comes back")
}

// A change of anything but the replay table is written to the state file
// and fsynced, file and directory, with the table as it is then.
func TestElectionStateChangeIsSynced(t *testing.T) {
	cases := map[string]func(*State){
		"round":  func(st *State) { st.Round++ },
		"term":   func(st *State) { st.MaxTerm++ },
		"grant":  func(st *State) { st.Grant.To = "c" },
		"ledger": func(st *State) { st.Ledger = []byte{9} },
		"round and peers": func(st *State) {
			st.Round++
			bump(1, 5)(st)
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := openT(t, dir, nil)
			require.NoError(t, s.Update(func(st *State) { *st = sample() }))
			require.NoError(t, s.Update(bump(0, 1)))
			syncs := recordSyncs(t)
			require.NoError(t, s.Update(f))
			assert.Equal(t, []string{tempName(filepath.Join(dir, FileName)), dir}, *syncs)
			b, err := os.ReadFile(filepath.Join(dir, FileName))
			require.NoError(t, err)
			st, err := Decode(b)
			require.NoError(t, err)
			assert.Equal(t, s.State(), st, "the state file holds all of it, the replay table too")
		})
	}
}

// sameButPeers decides what skips the fsync: it must see a change of every
// field but Peers, those added later too.
func TestSameButPeersComparesEveryField(t *testing.T) {
	typ := reflect.TypeFor[State]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			var st State
			v := reflect.ValueOf(&st).Elem().Field(i)
			switch v.Kind() {
			case reflect.Uint64:
				v.SetUint(1)
			case reflect.Slice:
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
				if v.Type().Elem().Kind() == reflect.Uint8 {
					v.Index(0).SetUint(1)
				} else {
					v.Index(0).Field(0).SetString("x")
				}
			case reflect.Struct:
				v.Field(0).SetUint(1)
			default:
				t.Fatalf("field %s of kind %s: teach this test to change it", f.Name, v.Kind())
			}
			assert.Equal(t, f.Name == "Peers", sameButPeers(st, State{}))
		})
	}
}

func TestMergePeers(t *testing.T) {
	p := func(id string, inc, seq uint64) Peer { return Peer{ID: id, Incarnation: inc, Seq: seq} }
	cases := map[string]struct{ newer, older, want []Peer }{
		"no replay file":   {nil, []Peer{p("b", 1, 5)}, []Peer{p("b", 1, 5)}},
		"no state table":   {[]Peer{p("b", 1, 5)}, nil, []Peer{p("b", 1, 5)}},
		"higher seq":       {[]Peer{p("b", 1, 50)}, []Peer{p("b", 1, 5)}, []Peer{p("b", 1, 50)}},
		"state file newer": {[]Peer{p("b", 1, 5)}, []Peer{p("b", 1, 50)}, []Peer{p("b", 1, 50)}},
		"higher incarnation wins over seq": {
			[]Peer{p("b", 1, 900), p("c", 7, 1)}, []Peer{p("b", 2, 3), p("c", 6, 99)},
			[]Peer{p("b", 2, 3), p("c", 7, 1)},
		},
		"union, newer's order first": {
			[]Peer{p("d", 1, 1), p("b", 1, 2)}, []Peer{p("b", 1, 1), p("c", 1, 1)},
			[]Peer{p("d", 1, 1), p("b", 1, 2), p("c", 1, 1)},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { assert.Equal(t, c.want, mergePeers(c.newer, c.older)) })
	}
}

// Loading merges the two files per peer: the replay file's newer floors
// over the state file's, never a floor below the state file's.
func TestLoadMergesReplayFile(t *testing.T) {
	dir := t.TempDir()
	s, _ := openT(t, dir, nil)
	require.NoError(t, s.Update(func(st *State) { *st = sample() }))
	require.NoError(t, s.Update(bump(0, 10)))                                    // replay: b+10, c
	require.NoError(t, s.Update(func(st *State) { st.Round++; bump(1, 7)(st) })) // state: b+10, c+7
	require.NoError(t, s.Update(bump(0, 1)))                                     // replay: b+11, c+7
	require.NoError(t, s.Update(func(st *State) { st.Round++; bump(1, 1)(st) })) // state: b+11, c+8
	want := s.State()
	require.Equal(t, sample().Peers[1].Seq+8, want.Peers[1].Seq)

	var logs bytes.Buffer
	_, st := openT(t, dir, &logs)
	assert.Equal(t, want, st)
	assert.Contains(t, logs.String(), "replay table loaded")
}

// A damaged replay file is a WARN naming it and what was wrong, never an
// error: the state file's table stands, and the next save replaces it.
func TestCorruptReplayFileIgnored(t *testing.T) {
	dir := t.TempDir()
	s, _ := openT(t, dir, nil)
	require.NoError(t, s.Update(func(st *State) { *st = sample() }))
	require.NoError(t, s.Update(bump(0, 10)))
	s.Close()
	rp := filepath.Join(dir, ReplayFileName)
	good, err := os.ReadFile(rp)
	require.NoError(t, err)
	slot1 := bytes.Clone(good) // save 1 is in slot 1
	slot1[minSlot+40] ^= 1     // in slot 1's body
	cases := map[string]struct {
		b    []byte
		want string
	}{
		"empty":      {nil, "not two slots"},
		"truncated":  {good[:minSlot+100], "not two slots"},
		"zeros":      {make([]byte, 2*minSlot), "no save in either slot"},
		"bit flip":   {slot1, "slot 1: checksum"},
		"not ours":   {bytes.Repeat([]byte("x\n"), minSlot), "slot 0: header"},
		"wrong slot": {append(good[minSlot:], good[:minSlot]...), "save 1 in slot 0"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(rp, c.b, 0o600))
			var logs bytes.Buffer
			s, st := openT(t, dir, &logs)
			assert.Equal(t, sample(), st, "the state file's table")
			assert.Contains(t, logs.String(), "level=WARN")
			assert.Contains(t, logs.String(), rp)
			assert.Contains(t, logs.String(), c.want)

			require.NoError(t, s.Update(bump(1, 1)), "replaced")
			_, st = openT(t, dir, nil)
			assert.Equal(t, sample().Peers[1].Seq+1, st.Peers[1].Seq)
		})
	}

	require.NoError(t, os.Remove(rp))
	var logs bytes.Buffer
	_, st := openT(t, dir, &logs)
	assert.Equal(t, sample(), st)
	assert.Contains(t, logs.String(), `level=INFO msg="no replay file`)
	assert.NotContains(t, logs.String(), "level=WARN")
}

// Saves alternate between the two slots: a save torn by a crash leaves
// the one before it.
func TestTornReplaySaveLeavesThePreviousOne(t *testing.T) {
	dir := t.TempDir()
	s, _ := openT(t, dir, nil)
	require.NoError(t, s.Update(func(st *State) { *st = sample() }))
	require.NoError(t, s.Update(bump(0, 1))) // save 1, slot 1
	prev := s.State()
	require.NoError(t, s.Update(bump(0, 1))) // save 2, slot 0
	s.Close()
	rp := filepath.Join(dir, ReplayFileName)
	b, err := os.ReadFile(rp)
	require.NoError(t, err)
	require.Len(t, b, 2*minSlot)
	b[30] ^= 1 // in slot 0's body
	require.NoError(t, os.WriteFile(rp, b, 0o600))

	var logs bytes.Buffer
	s, st := openT(t, dir, &logs)
	assert.Equal(t, prev, st)
	assert.Contains(t, logs.String(), "unfinished save")
	assert.NotContains(t, logs.String(), "level=WARN")
	require.NoError(t, s.Update(bump(0, 5))) // save 2 again, into slot 0
	_, st = openT(t, dir, nil)
	assert.Equal(t, prev.Peers[0].Seq+5, st.Peers[0].Seq)
}

// A table larger than a slot gets a larger file.
func TestReplayFileGrows(t *testing.T) {
	dir := t.TempDir()
	s, _ := openT(t, dir, nil)
	var big []Peer
	for i := range 200 {
		big = append(big, Peer{ID: fmt.Sprintf("node-%03d.example.org", i), Incarnation: 1 << 40, Seq: uint64(i)})
	}
	require.NoError(t, s.Update(func(st *State) { st.Peers = sample().Peers }))
	require.NoError(t, s.Update(func(st *State) { st.Round = 1 }))
	require.NoError(t, s.Update(func(st *State) { st.Peers = big }))
	fi, err := os.Stat(filepath.Join(dir, ReplayFileName))
	require.NoError(t, err)
	assert.Greater(t, fi.Size(), int64(2*minSlot))
	_, st := openT(t, dir, nil)
	assert.Equal(t, append(big, sample().Peers...), st.Peers, "the replay file's table, then what only the state file has")
}

func FuzzDecodeReplay(f *testing.F) {
	rec, _ := encodeReplay(1, sample().Peers)
	good := make([]byte, 2*minSlot)
	copy(good[minSlot:], rec)
	f.Add(good)
	f.Add(make([]byte, 2*minSlot))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		peers, gen, slot, _, err := decodeReplay(b)
		if err != nil {
			return
		}
		// What decodes is a record of the slot its number names.
		require.Equal(t, len(b)/2, slot)
		p, g, err := decodeReplayRecord(b[int(gen%2)*slot:])
		require.NoError(t, err)
		assert.Equal(t, gen, g)
		assert.Equal(t, peers, p)
	})
}
