//go:build unix

package statefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The state directory's files are written with plain system calls, not
// os.File: opening an os.File also costs two fcntl calls and an epoll_ctl
// (the runtime tries to register every descriptor with its poller, and a
// regular file refuses), which was a third of a save's system calls.

// writeSynced replaces path with b so that a crash or power cut at any
// point leaves either the old or the new contents: write a temporary
// file, fsync it, rename it over path, fsync the directory.
func writeSynced(path string, b []byte) (err error) {
	tmp := tempName(path)
	fd, err := openFile(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			unix.Unlink(tmp)
		}
	}()
	if err := writeAt(fd, b, 0); err != nil {
		closeFD(fd)
		return err
	}
	if err := fsync(fd, tmp); err != nil {
		closeFD(fd)
		return err
	}
	if err := closeFD(fd); err != nil {
		return err
	}
	if err := rename(tmp, path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	dfd, err := openFile(dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer closeFD(dfd)
	return fsync(dfd, dir)
}

// replayFile is the open replay file.
type replayFile struct{ fd int }

// openReplay opens the existing replay file for saves in place.
func openReplay(path string) (*replayFile, error) {
	fd, err := openFile(path, unix.O_WRONLY)
	if err != nil {
		return nil, err
	}
	return &replayFile{fd}, nil
}

// createReplay replaces path with a file of size bytes holding rec at off,
// not fsynced, and returns it open.
func createReplay(path string, size int64, rec []byte, off int64) (_ *replayFile, err error) {
	tmp := tempName(path)
	fd, err := openFile(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			closeFD(fd)
			unix.Unlink(tmp)
		}
	}()
	if err := retry(func() error { return unix.Ftruncate(fd, size) }); err != nil {
		return nil, err
	}
	if err := writeAt(fd, rec, off); err != nil {
		return nil, err
	}
	if err := rename(tmp, path); err != nil {
		return nil, err
	}
	return &replayFile{fd}, nil
}

// writeAt writes b at off: one system call.
func (f *replayFile) writeAt(b []byte, off int64) error { return writeAt(f.fd, b, off) }

func (f *replayFile) close() error { return closeFD(f.fd) }

func openFile(path string, flags int) (int, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = unix.Open(path, flags|unix.O_CLOEXEC, 0o600)
		return err
	})
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

func writeAt(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		var n int
		err := retry(func() (err error) {
			n, err = unix.Pwrite(fd, b, off)
			return err
		})
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

func fsync(fd int, path string) error {
	if err := retry(func() error { return unix.Fsync(fd) }); err != nil {
		return &fs.PathError{Op: "fsync", Path: path, Err: err}
	}
	synced(path)
	return nil
}

func rename(from, to string) error {
	if err := retry(func() error { return unix.Rename(from, to) }); err != nil {
		return &fs.PathError{Op: "rename", Path: from + " " + to, Err: err}
	}
	return nil
}

// closeFD closes fd; EINTR is not retried (the descriptor is gone either
// way on Linux).
func closeFD(fd int) error {
	if err := unix.Close(fd); err != nil && !errors.Is(err, unix.EINTR) {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// retry runs f again while it is interrupted by a signal.
func retry(f func() error) error {
	for {
		if err := f(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
