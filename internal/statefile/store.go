package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// FileName is the state file's name inside the state directory.
const FileName = "state"

// Store is one node's state file. Its methods are safe for concurrent use;
// every Update writes the whole file atomically before it returns.
type Store struct {
	path string
	log  *slog.Logger

	mu      sync.Mutex
	cur     State
	written []byte
}

// Open loads dir/state. A missing file is a cold start (logged at INFO); a
// file that cannot be read or decoded is logged at WARN naming the file and
// what was wrong, and is a cold start too: the next Update replaces it.
// The error is only for a directory that cannot be created.
func Open(dir string, log *slog.Logger) (*Store, State, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, State{}, fmt.Errorf("state dir %s: %w", dir, err)
	}
	s := &Store{path: filepath.Join(dir, FileName), log: log}
	b, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		log.Info("no state file; starting cold", "file", s.path)
		return s, State{}, nil
	case err != nil:
		log.Warn("state file unreadable; starting cold", "file", s.path, "err", err)
		return s, State{}, nil
	}
	st, err := Decode(b)
	if err != nil {
		log.Warn("state file corrupt; starting cold", "file", s.path, "err", err)
		return s, State{}, nil
	}
	s.cur, s.written = st, b
	log.Info("state loaded", "file", s.path, "round", st.Round, "max_term", st.MaxTerm, "ledger_bytes", len(st.Ledger),
		"grant_term", st.Grant.Term, "grant_to", st.Grant.To, "replay_peers", len(st.Peers))
	return s, st, nil
}

// Path returns the state file's path.
func (s *Store) Path() string { return s.path }

// State returns the last state written (or loaded).
func (s *Store) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Update applies f to the current state and, if that changes the file,
// writes it atomically (temporary file, fsync, rename, fsync of the
// directory) before returning. On error the file keeps its previous
// contents and the state in memory is not changed.
func (s *Store) Update(f func(*State)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.cur
	f(&next)
	b, err := Encode(next)
	if err != nil {
		return err
	}
	if bytes.Equal(b, s.written) {
		return nil
	}
	if err := writeAtomic(s.path, b); err != nil {
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	s.cur, s.written = next, b
	return nil
}

// writeAtomic replaces path with b so that a crash at any point leaves
// either the old or the new contents.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
