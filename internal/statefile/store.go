package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// FileName is the state file's name inside the state directory.
const FileName = "state"

// Store is one node's state file and replay file. Its methods are safe for
// concurrent use.
type Store struct {
	path, replayPath string
	log              *slog.Logger

	mu  sync.Mutex
	cur State
	// The replay file: open once saved to (nil before), its slot size
	// (0: there is no usable one yet) and its last save's number.
	replay *replayFile
	slot   int
	gen    uint64
}

// Open loads dir/state and dir/replay. A missing state file is a cold
// start (logged at INFO); a state file that cannot be read or decoded is
// logged at WARN naming the file and what was wrong, and is a cold start
// too: the next Update replaces it. The replay file's table is merged into
// State.Peers (per peer the newer floor); a missing one is logged at INFO,
// a corrupt one at WARN, and either way the state file's table stands.
// The error is only for a directory that cannot be created.
func Open(dir string, log *slog.Logger) (*Store, State, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, State{}, fmt.Errorf("state dir %s: %w", dir, err)
	}
	s := &Store{path: filepath.Join(dir, FileName), replayPath: filepath.Join(dir, ReplayFileName), log: log}
	s.load()
	s.loadReplay()
	return s, s.cur, nil
}

func (s *Store) load() {
	b, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.log.Info("no state file; starting cold", "file", s.path)
		return
	case err != nil:
		s.log.Warn("state file unreadable; starting cold", "file", s.path, "err", err)
		return
	}
	st, err := Decode(b)
	var newer *NewerFormatError
	switch {
	case errors.As(err, &newer):
		s.log.Warn("state file "+newer.Error()+": starting without it, as on a first start: no saved round or term "+
			"(a claim may carry a lower term until a running node corrects it), job ledger or run history "+
			"(instants the others do not know of may run again or be missed), quorum grant (no votes or acks "+
			"for the longest promise) or replay table; the file is replaced in format "+strconv.Itoa(Version)+
			" at the next save", "file", s.path)
		return
	case err != nil:
		s.log.Warn("state file corrupt; starting cold", "file", s.path, "err", err)
		return
	}
	s.cur = st
	s.log.Info("state loaded", "file", s.path, "round", st.Round, "max_term", st.MaxTerm, "ledger_bytes", len(st.Ledger),
		"grant_term", st.Grant.Term, "grant_to", st.Grant.To, "grant_promise", time.Duration(st.Grant.PromiseNS),
		"replay_peers", len(st.Peers))
}

func (s *Store) loadReplay() {
	b, err := os.ReadFile(s.replayPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.log.Info("no replay file; the state file's replay table stands", "file", s.replayPath)
		return
	case err != nil:
		s.log.Warn("replay file unreadable; the state file's replay table stands", "file", s.replayPath, "err", err)
		return
	}
	peers, gen, slot, torn, err := decodeReplay(b)
	var newer *NewerFormatError
	if errors.As(err, &newer) {
		s.log.Warn("replay file "+newer.Error()+": the state file's replay table stands; the file is replaced "+
			"at the next save", "file", s.replayPath)
		return
	}
	if err != nil {
		s.log.Warn("replay file corrupt; the state file's replay table stands", "file", s.replayPath, "err", err)
		return
	}
	if torn != "" {
		s.log.Info("replay file: an unfinished save ignored, the one before it used", "file", s.replayPath, "err", torn)
	}
	s.cur.Peers = mergePeers(peers, s.cur.Peers)
	s.slot, s.gen = slot, gen
	s.log.Info("replay table loaded", "file", s.replayPath, "save", gen, "replay_peers", len(peers))
}

// Path returns the state file's path.
func (s *Store) Path() string { return s.path }

// State returns the last state saved (or loaded).
func (s *Store) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Update applies f to the current state and saves what changed before
// returning. A change of anything but Peers writes the state file
// atomically and durably (temporary file, fsync, rename, fsync of the
// directory), with Peers as they are then. A change of Peers alone goes to
// the replay file in place, without fsync (ReplayFileName says what that
// costs a power cut: an older replay floor, nothing else). On error the
// files keep their previous contents and the state in memory is not
// changed.
func (s *Store) Update(f func(*State)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.cur
	f(&next)
	if sameButPeers(next, s.cur) {
		if slices.Equal(next.Peers, s.cur.Peers) {
			return nil
		}
		if err := s.saveReplay(next.Peers); err != nil {
			return fmt.Errorf("replay file %s: %w", s.replayPath, err)
		}
		s.cur = next
		return nil
	}
	b, err := Encode(next)
	if err != nil {
		return err
	}
	if err := writeSynced(s.path, b); err != nil {
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	s.cur = next
	return nil
}

// sameButPeers reports whether a and b differ at most in Peers: whether
// an Update may skip the state file. Every other field must be compared
// here (TestSameButPeersComparesEveryField).
func sameButPeers(a, b State) bool {
	return a.Round == b.Round && a.MaxTerm == b.MaxTerm && a.Grant == b.Grant &&
		bytes.Equal(a.Ledger, b.Ledger) && bytes.Equal(a.History, b.History)
}

// saveReplay writes peers as the replay file's next save.
func (s *Store) saveReplay(peers []Peer) error {
	gen := s.gen + 1
	rec, err := encodeReplay(gen, peers)
	if err != nil {
		return err
	}
	off := int64(gen%2) * int64(s.slot)
	if s.replay == nil && s.slot >= len(rec) {
		// Opened lazily: a node without a udp election never writes one.
		if s.replay, err = openReplay(s.replayPath); err != nil {
			s.log.Info("replay file not reopened; writing a new one", "file", s.replayPath, "err", err)
		}
	}
	if s.replay != nil && s.slot >= len(rec) {
		if err := s.replay.writeAt(rec, off); err != nil {
			return err
		}
		s.gen = gen
		return nil
	}
	// None yet, or the table outgrew the slots.
	slot := slotFor(len(rec))
	f, err := createReplay(s.replayPath, 2*int64(slot), rec, int64(gen%2)*int64(slot))
	if err != nil {
		return err
	}
	if s.replay != nil {
		s.replay.close()
	}
	s.replay, s.slot, s.gen = f, slot, gen
	return nil
}

// Close closes the replay file; a later save opens it again.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replay == nil {
		return nil
	}
	err := s.replay.close()
	s.replay = nil
	return err
}

// pid names this process's temporary files.
var pid = strconv.Itoa(os.Getpid())

// tempName is the temporary file a new version of path is written to
// before it is renamed over path: one per process, so that two processes
// misconfigured to share a directory cannot mix their writes in it.
func tempName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+pid+".tmp")
}

// onSync, if set (tests), is called with the path of each file or
// directory fsynced.
var onSync func(path string)

func synced(path string) {
	if onSync != nil {
		onSync(path)
	}
}
