package wire

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// NewKeyLine returns a new random key of MinKeyLen bytes as a key file line:
// lowercase hex, the format LoadKeyring reads first.
func NewKeyLine() string {
	key := make([]byte, MinKeyLen)
	rand.Read(key) // never fails (crypto/rand panics if it cannot read)
	return hex.EncodeToString(key)
}

// WriteKeyFile creates path as a key file holding one new random key, with
// mode 0600: readable and writable by its owner only, as LoadKeyring
// requires; or, with gid >= 0, owned by that group and mode 0640, for a
// daemon that runs as a user of the group. It never replaces a file (a key
// is replaced by rotation, see docs/wire.md), and the file is on disk
// (synced) when it returns.
func WriteKeyFile(path, comment string, gid int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("wire: key file %s exists: not replaced (to change a cluster's key, rotate it: docs/wire.md, \"Rotating keys\")", path)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("wire: key file %s: directory %s does not exist", path, filepath.Dir(path))
	case err != nil:
		return fmt.Errorf("wire: key file: %w", err)
	}
	// Whatever the umask made of 0600, never more.
	mode := os.FileMode(0o600)
	if gid >= 0 {
		mode = 0o640
		err = f.Chown(-1, gid)
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("wire: key file %s: %w", path, err)
	}
	_, err = fmt.Fprintf(f, "# %s\n%s\n", comment, NewKeyLine())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("wire: key file %s: %w", path, err)
	}
	return nil
}
