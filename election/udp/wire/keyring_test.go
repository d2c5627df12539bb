package wire

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyRotation(t *testing.T) {
	old := testKeyring(t, "o")
	both := testKeyring(t, "o", "n")     // step 1: new key installed second
	newFirst := testKeyring(t, "n", "o") // step 2: new key signs
	onlyNew := testKeyring(t, "n")       // step 3: old key removed

	encode := func(k *Keyring) []byte {
		b, err := Encode(fullMessage(), k)
		require.NoError(t, err)
		return b
	}
	tests := []struct {
		name     string
		sender   *Keyring
		receiver *Keyring
		ok       bool
	}{
		{"old to step1", old, both, true},
		{"step1 to old", both, old, true},
		{"step2 to step1", newFirst, both, true},
		{"step1 to step2", both, newFirst, true},
		{"step2 to step3", newFirst, onlyNew, true},
		{"step3 to step2", onlyNew, newFirst, true},
		{"old to step3: skipped a step", old, onlyNew, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(encode(tt.sender), tt.receiver)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrBadMAC)
			}
		})
	}
}

func TestNewKeyringRejects(t *testing.T) {
	_, err := NewKeyring()
	assert.ErrorContains(t, err, "no keys")
	_, err = NewKeyring(make([]byte, MinKeyLen), make([]byte, MinKeyLen-1))
	assert.ErrorContains(t, err, "key 2 is 31 bytes")
	_, err = NewKeyring(make([]byte, MaxKeyLen+1))
	assert.ErrorContains(t, err, "key 1 is 1025 bytes")
}

func TestNewKeyringCopiesKeys(t *testing.T) {
	key := []byte(strings.Repeat("k", MinKeyLen))
	k, err := NewKeyring(key)
	require.NoError(t, err)
	b, err := Encode(fullMessage(), k)
	require.NoError(t, err)
	key[0] = 'x'
	_, err = Decode(b, k)
	assert.NoError(t, err, "changing the caller's slice must not change the keyring")
}

func TestParseKeyring(t *testing.T) {
	raw := []byte(strings.Repeat("0123456789abcdef", 2))
	hexKey := hex.EncodeToString(raw)
	b64 := base64.StdEncoding.EncodeToString(append(raw, 'x'))
	tests := []struct {
		name    string
		text    string
		keys    int
		wantErr string
	}{
		{"hex", hexKey + "\n", 1, ""},
		{"upper hex", strings.ToUpper(hexKey), 1, ""},
		{"base64", b64, 1, ""},
		{"raw base64", strings.TrimRight(b64, "="), 1, ""},
		{"comments, blanks, spaces", "# rotated 2026-11\n\n  " + hexKey + "  \n# old\n" + b64 + "\n", 2, ""},
		{"empty", "", 0, "no keys"},
		{"comments only", "# nothing\n", 0, "no keys"},
		{"short key", "# c\n" + hex.EncodeToString(raw[:16]), 0, "line 2: key is 16 bytes, want 32"},
		{"odd hex", hexKey + "a", 0, "line 1: hex key has an odd number of digits"},
		{"garbage", "not a key!", 0, "line 1: key is neither hex nor standard base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ParseKeyring(strings.NewReader(tt.text))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), hexKey, "errors must not leak key material")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.keys, k.Len())
		})
	}
}

func TestParseKeyringPrimaryIsFirst(t *testing.T) {
	a := strings.Repeat("aa", MinKeyLen)
	b := strings.Repeat("bb", MinKeyLen)
	ab, err := ParseKeyring(strings.NewReader(a + "\n" + b))
	require.NoError(t, err)
	onlyB, err := ParseKeyring(strings.NewReader(b))
	require.NoError(t, err)
	pkt, err := Encode(fullMessage(), ab)
	require.NoError(t, err)
	_, err = Decode(pkt, onlyB)
	assert.ErrorIs(t, err, ErrBadMAC, "the first key must sign")
}

func TestLoadKeyring(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}
	key := strings.Repeat("ab", MinKeyLen) + "\n"
	tests := []struct {
		name    string
		path    string
		wantErr string
	}{
		{"0600", write("ok", 0o600, key), ""},
		{"0640 group may read", write("group", 0o640, key), ""},
		{"world-readable", write("world", 0o644, key), "mode 0644 lets other users read or change the keys; run chmod 600"},
		{"world-writable", write("ww", 0o602, key), "mode 0602"},
		{"bad content names file and line", write("bad", 0o600, "\nz!z"), "bad: line 2: key is neither hex"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		{"directory", dir, "not a regular file"},
		{"too big", write("big", 0o600, strings.Repeat("#\n", maxKeyFileSize)), "max 65536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := LoadKeyring(tt.path)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Nil(t, k)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, k.Len())
		})
	}
}

func TestNilKeyringLen(t *testing.T) {
	var k *Keyring
	assert.Equal(t, 0, k.Len())
}
