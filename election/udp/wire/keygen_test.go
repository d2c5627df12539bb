package wire

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key file written by WriteKeyFile loads (mode and format), holds a new
// random key each time, and is never written over.
func TestWriteKeyFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.key"), filepath.Join(dir, "b.key")
	require.NoError(t, WriteKeyFile(a, "lanleader cluster key", -1))
	require.NoError(t, WriteKeyFile(b, "lanleader cluster key", -1))
	st, err := os.Stat(a)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	ka, err := LoadKeyring(a)
	require.NoError(t, err)
	assert.Equal(t, 1, ka.Len())
	assert.Len(t, ka.keys[0], MinKeyLen)
	kb, err := LoadKeyring(b)
	require.NoError(t, err)
	assert.NotEqual(t, ka.keys[0], kb.keys[0], "a new key each time")
	body, err := os.ReadFile(a)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(body), "# lanleader cluster key\n"))

	before, _ := os.ReadFile(a)
	err = WriteKeyFile(a, "again", -1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), a+" exists: not replaced")
	after, _ := os.ReadFile(a)
	assert.Equal(t, before, after, "the existing key is untouched")

	err = WriteKeyFile(filepath.Join(dir, "nope", "c.key"), "x", -1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "directory "+filepath.Join(dir, "nope")+" does not exist")
}

// With a group, the file is that group's and mode 0640, which LoadKeyring
// accepts: the daemon's user reads it without owning it.
func TestWriteKeyFileForAGroup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	gid := os.Getgid()
	require.NoError(t, WriteKeyFile(path, "k", gid))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm())
	assert.Equal(t, uint32(gid), st.Sys().(*syscall.Stat_t).Gid)
	_, err = LoadKeyring(path)
	require.NoError(t, err)
}
