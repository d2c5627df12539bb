package statefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleV1 is what testdata/v1.state, written by the version 1 code,
// holds.
func sampleV1() State {
	return State{Round: 41, MaxTerm: 41<<24 | 100<<16 | 7, Ledger: []byte{1, 0, 1, 2, 3}, History: []byte(`{"version":1,"runs":{}}`)}
}

func sample() State {
	s := sampleV1()
	s.Grant = Grant{Term: 41<<24 | 100<<16 | 9, To: "b", PromiseNS: int64(3 * time.Second)}
	s.Peers = []Peer{{ID: "b", Incarnation: 1<<40 | 3, Seq: 812}, {ID: "c", Incarnation: 1<<40 | 5, Seq: 17}}
	return s
}

// TestReadsVersion1: a node upgraded in place keeps its round, ledger and
// history from the file the previous release wrote, and its next write is
// the current version.
func TestReadsVersion1(t *testing.T) {
	b, err := os.ReadFile("testdata/v1.state")
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, []byte("lanleader-state 1 ")))
	got, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, sampleV1(), got)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), b, 0o600))
	s, st, err := Open(dir, nil)
	require.NoError(t, err)
	assert.Equal(t, sampleV1(), st, "not a cold start")
	require.NoError(t, s.Update(func(st *State) { st.Grant = Grant{Term: 5, To: "x"} }))
	b, err = os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, []byte(fmt.Sprintf("lanleader-state %d ", Version))), "rewritten as version %d", Version)
}

// TestReadsVersion2: a version 2 file (no promise with the grant) reads
// with the promise zero, which the node takes as its own.
func TestReadsVersion2(t *testing.T) {
	v2 := sample()
	v2.Grant.PromiseNS = 0
	body, err := json.Marshal(v2)
	require.NoError(t, err)
	require.NotContains(t, string(body), "promise_ns")
	got, err := Decode(record(magic+" 2", body))
	require.NoError(t, err)
	assert.Equal(t, v2, got)
}

func TestRoundTrip(t *testing.T) {
	b, err := Encode(sample())
	require.NoError(t, err)
	got, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, sample(), got)
}

// Every kind of damage is reported, with what was wrong, never a panic and
// never a half-read state.
func TestCorruptionDetected(t *testing.T) {
	good, err := Encode(sample())
	require.NoError(t, err)
	nl := bytes.IndexByte(good, '\n')
	flip := bytes.Clone(good)
	flip[nl+5] ^= 0x20
	cases := map[string]struct {
		b    []byte
		want string
	}{
		"empty":          {nil, "no header"},
		"truncated":      {good[:len(good)-3], "truncated write"},
		"bit flip":       {flip, "checksum"},
		"other version":  {bytes.Replace(good, []byte(fmt.Sprintf("lanleader-state %d", Version)), []byte("lanleader-state 0"), 1), "format version"},
		"not ours":       {[]byte("hello\nworld"), "header"},
		"trailing bytes": {append(bytes.Clone(good), 'x'), "truncated write"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Decode(c.b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Equal(t, State{}, s)
		})
	}
}

// The file survives a restart; a corrupt or unreadable file is a cold
// start with a WARN naming the file.
func TestStoreReopenAndCorruptFile(t *testing.T) {
	dir := t.TempDir()
	s, st, err := Open(dir, nil)
	require.NoError(t, err)
	assert.Equal(t, State{}, st, "missing: cold")
	require.NoError(t, s.Update(func(st *State) { *st = sample() }))
	_, st, err = Open(dir, nil)
	require.NoError(t, err)
	assert.Equal(t, sample(), st)

	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte("lanleader-state 1 3 00000000\n{}x"), 0o600))
	var logs bytes.Buffer
	s, st, err = Open(dir, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	assert.Equal(t, State{}, st)
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), filepath.Join(dir, FileName))
	assert.Contains(t, logs.String(), "checksum")
	require.NoError(t, s.Update(func(st *State) { st.Round = 2 }), "a corrupt file is replaced")
	_, st, _ = Open(dir, nil)
	assert.Equal(t, uint64(2), st.Round)
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file left behind")
}

func TestUnchangedStateIsNotRewritten(t *testing.T) {
	dir := t.TempDir()
	s, _, err := Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.Update(func(st *State) { st.Round = 1 }))
	p := filepath.Join(dir, FileName)
	before, err := os.Stat(p)
	require.NoError(t, err)
	assert.NoError(t, s.Update(func(st *State) { st.Round = 1 }))
	after, err := os.Stat(p)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "not rewritten (a rewrite renames a new file in)")
	require.NoError(t, s.Update(func(st *State) { st.Round = 2 }))
	after, err = os.Stat(p)
	require.NoError(t, err)
	assert.False(t, os.SameFile(before, after), "a change is written by rename")
}

func TestOpenFailsOnlyForAnUnusableDirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(f, nil, 0o600))
	_, _, err := Open(filepath.Join(f, "sub"), nil)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), f))
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode(sample())
	f.Add(good)
	f.Add([]byte("lanleader-state 1 2 00000000\n{}"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to something that decodes the same.
		b2, err := Encode(s)
		require.NoError(t, err)
		s2, err := Decode(b2)
		require.NoError(t, err)
		assert.Equal(t, s, s2)
	})
}
