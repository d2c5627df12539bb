package cli

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The default state dir is used only if it exists and is writable; a dir
// given explicitly must work or the start fails naming the setting; an
// empty one turns the state file off.
func TestOpenState(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	tmp := t.TempDir()

	st, err := openState(settings{StateDir: filepath.Join(tmp, "missing")}, log)
	require.NoError(t, err)
	assert.Nil(t, st, "default dir missing: no state file")

	st, err = openState(settings{StateDir: tmp}, log)
	require.NoError(t, err)
	require.NotNil(t, st, "default dir exists: used")
	assert.Equal(t, filepath.Join(tmp, "state"), st.Path())

	file := filepath.Join(tmp, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = openState(settings{StateDir: filepath.Join(file, "sub"), StateDirSet: true}, log)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--state-dir (election.state_dir)")
	assert.IsType(t, ConfigError{}, err)

	st, err = openState(settings{StateDir: filepath.Join(tmp, "new"), StateDirSet: true}, log)
	require.NoError(t, err)
	assert.NotNil(t, st, "an explicit dir is created")

	st, err = openState(settings{StateDir: "", StateDirSet: true}, log)
	require.NoError(t, err)
	assert.Nil(t, st)
}
