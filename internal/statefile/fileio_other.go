//go:build !unix

package statefile

import (
	"os"
	"path/filepath"
)

// writeSynced replaces path with b so that a crash or power cut at any
// point leaves either the old or the new contents: write a temporary
// file, fsync it, rename it over path, fsync the directory.
func writeSynced(path string, b []byte) (err error) {
	tmp := tempName(path)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	synced(tmp)
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return err
	}
	synced(dir)
	return nil
}

// replayFile is the open replay file.
type replayFile struct{ f *os.File }

// openReplay opens the existing replay file for saves in place.
func openReplay(path string) (*replayFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return &replayFile{f}, nil
}

// createReplay replaces path with a file of size bytes holding rec at off,
// not fsynced, and returns it open.
func createReplay(path string, size int64, rec []byte, off int64) (_ *replayFile, err error) {
	tmp := tempName(path)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Truncate(size); err != nil {
		return nil, err
	}
	if _, err := f.WriteAt(rec, off); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return &replayFile{f}, nil
}

// writeAt writes b at off.
func (f *replayFile) writeAt(b []byte, off int64) error {
	_, err := f.f.WriteAt(b, off)
	return err
}

func (f *replayFile) close() error { return f.f.Close() }
