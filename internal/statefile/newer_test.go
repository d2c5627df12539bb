package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file of a format newer than this binary reads (a downgrade, or a
// node copied back from a newer one) is not damage: the WARN says who
// wrote it, what this binary reads, and what starting without it costs —
// whether the newer header keeps today's layout or not.
func TestNewerFormatSaysSoNotCorrupt(t *testing.T) {
	body := []byte(`{"round":9,"max_term":1,"future":true}`)
	newer := Version + 1
	for name, b := range map[string][]byte{
		"same layout":  record(fmt.Sprintf("%s %d", magic, newer), body),
		"other layout": []byte(fmt.Sprintf("%s %d sha256 abcdef 39\n%s", magic, newer, body)),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(b)
			var nf *NewerFormatError
			require.True(t, errors.As(err, &nf), "got %v", err)
			assert.Equal(t, newer, nf.Format)

			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), b, 0o600))
			var logs bytes.Buffer
			s, st, err := Open(dir, slog.New(slog.NewTextHandler(&logs, nil)))
			require.NoError(t, err)
			assert.Equal(t, State{}, st)
			out := logs.String()
			assert.Contains(t, out, "level=WARN")
			assert.Contains(t, out, fmt.Sprintf("state file written by a newer lanleader (format %d; this one reads up to %d): starting without it", newer, Version))
			assert.Contains(t, out, "round")
			assert.Contains(t, out, "ledger")
			assert.Contains(t, out, fmt.Sprintf("replaced in format %d", Version))
			assert.Contains(t, out, filepath.Join(dir, FileName))
			assert.NotContains(t, out, "corrupt")
			require.NoError(t, s.Update(func(st *State) { st.Round = 2 }))
		})
	}
}

// The replay file likewise.
func TestNewerReplayFormatSaysSoNotCorrupt(t *testing.T) {
	dir := t.TempDir()
	rec := record(fmt.Sprintf("%s %d %d", replayMagic, replayVersion+1, 1), []byte(`{"peers":[]}`))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ReplayFileName), append(rec, make([]byte, minSlot-len(rec))...), 0o600))
	var logs bytes.Buffer
	_, _, err := Open(dir, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	out := logs.String()
	assert.Contains(t, out, fmt.Sprintf("replay file written by a newer lanleader (format %d; this one reads up to %d)", replayVersion+1, replayVersion))
	assert.NotContains(t, out, "corrupt")
}
