package wire

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// maxKeyFileSize bounds what LoadKeyring reads: a key file is a few lines.
const maxKeyFileSize = 64 << 10

// LoadKeyring reads a keyring from a key file: one key per line, hex or
// standard base64 (padded or not); blank lines and lines starting with '#'
// are ignored. The first key signs; all are accepted. A line made only of
// hex digits is read as hex. Generate a key file with WriteKeyFile (`lanleader
// keygen FILE`), or a key with `openssl rand -hex 32`.
//
// The file must not be readable by other users (mode 0600 or 0640): on Unix,
// LoadKeyring refuses a world-readable or world-writable file. Errors name the
// file and the line.
func LoadKeyring(path string) (*Keyring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("wire: key file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("wire: key file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("wire: key file %s: not a regular file", path)
	}
	if perm := st.Mode().Perm(); runtime.GOOS != "windows" && perm&0o006 != 0 {
		return nil, fmt.Errorf("wire: key file %s: mode %04o lets other users read or change the keys; run chmod 600 %s", path, perm, path)
	}
	if st.Size() > maxKeyFileSize {
		return nil, fmt.Errorf("wire: key file %s: %d bytes, max %d", path, st.Size(), maxKeyFileSize)
	}
	k, err := ParseKeyring(io.LimitReader(f, maxKeyFileSize))
	if err != nil {
		return nil, fmt.Errorf("wire: key file %s: %w", path, err)
	}
	return k, nil
}

// ParseKeyring reads a keyring in the key file format LoadKeyring describes,
// without the file permission checks.
func ParseKeyring(r io.Reader) (*Keyring, error) {
	var keys [][]byte
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		key, err := parseKey(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if len(key) < MinKeyLen || len(key) > MaxKeyLen {
			return nil, fmt.Errorf("line %d: key is %d bytes, want %d to %d (lanleader keygen makes one)", line, len(key), MinKeyLen, MaxKeyLen)
		}
		keys = append(keys, key)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no keys (one per line, hex or base64; lanleader keygen makes one)")
	}
	return NewKeyring(keys...)
}

// parseKey decodes one key; its text is never put in an error message.
func parseKey(s string) ([]byte, error) {
	if isHex(s) {
		if len(s)%2 != 0 {
			return nil, fmt.Errorf("hex key has an odd number of digits (%d)", len(s))
		}
		return hex.DecodeString(s)
	}
	if key, err := base64.StdEncoding.DecodeString(s); err == nil {
		return key, nil
	}
	if key, err := base64.RawStdEncoding.DecodeString(s); err == nil {
		return key, nil
	}
	return nil, fmt.Errorf("key is neither hex nor standard base64")
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
