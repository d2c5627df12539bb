package jobs

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"
)

// DefaultHistorySize is how many finished runs per job a History keeps
// unless RunnerConfig.HistorySize says otherwise.
const DefaultHistorySize = 20

// historyVersion is the "version" of a History snapshot; bump it on any
// incompatible change of layout.
const historyVersion = 1

// History keeps the last finished runs of each job, newest first: the runs
// this node made, and the runs it heard of in the leaders' ledgers (Heard
// set; those know only the instant, term, outcome and leader). It is safe
// for concurrent use. Snapshot and Restore carry it across restarts.
type History struct {
	mu   sync.Mutex
	size int
	runs map[string][]RunRecord // job name → newest first
}

// NewHistory returns a History that keeps size runs per job
// (DefaultHistorySize if size <= 0).
func NewHistory(size int) *History {
	if size <= 0 {
		size = DefaultHistorySize
	}
	return &History{size: size, runs: map[string][]RunRecord{}}
}

// sameRun reports whether a and b describe one run: the same run id, or
// for records heard from a ledger (no run id), the same job, kind, instant
// and term.
func sameRun(a, b RunRecord) bool {
	if a.RunID != "" && b.RunID != "" {
		return a.RunID == b.RunID
	}
	return a.Job == b.Job && a.Manual == b.Manual && a.Term == b.Term && a.ScheduledAt.Equal(b.ScheduledAt)
}

// Add records a finished run. A record of a run already present replaces
// it unless the present one was made by this node and the new one was only
// heard (the local record knows more), or both were heard and the new one
// is interrupted where the present one has the run's own outcome.
func (h *History) Add(rec RunRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.addLocked(rec)
}

func (h *History) addLocked(rec RunRecord) {
	runs := h.runs[rec.Job]
	for i, old := range runs {
		if sameRun(old, rec) {
			if rec.Heard && (!old.Heard || old.Outcome == rec.Outcome || rec.Outcome.progress() < old.Outcome.progress()) {
				return // nothing new
			}
			runs = append(runs[:i], runs[i+1:]...)
			break
		}
	}
	runs = append(runs, rec)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].when().After(runs[j].when()) })
	if len(runs) > h.size {
		runs = runs[:h.size]
	}
	h.runs[rec.Job] = runs
}

// when orders records: by start where known, else by instant.
func (rec RunRecord) when() time.Time {
	if !rec.Started.IsZero() {
		return rec.Started
	}
	return rec.ScheduledAt
}

// Runs returns a copy of job's runs, newest first; at most n (all if
// n <= 0).
func (h *History) Runs(job string, n int) []RunRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	runs := h.runs[job]
	if n > 0 && len(runs) > n {
		runs = runs[:n]
	}
	return append([]RunRecord(nil), runs...)
}

// Find returns the run with the given run id, if it is still kept.
func (h *History) Find(runID string) (RunRecord, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, runs := range h.runs {
		for _, rec := range runs {
			if rec.RunID == runID && runID != "" {
				return rec, true
			}
		}
	}
	return RunRecord{}, false
}

// historySnapshot is the encoded form of a History.
type historySnapshot struct {
	Version int                    `json:"version"`
	Runs    map[string][]RunRecord `json:"runs"`
}

// Snapshot encodes every kept run (JSON, a few KB per job at most), for a
// state file. Restore reads it back.
func (h *History) Snapshot() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, err := json.Marshal(historySnapshot{Version: historyVersion, Runs: h.runs})
	if err != nil { // RunRecord holds nothing json cannot encode
		panic(fmt.Sprintf("jobs: encode history: %v", err))
	}
	return b
}

// Restore merges a Snapshot into h: runs already present are kept once,
// and each job keeps its newest runs. A snapshot that does not decode, or
// of another version, is an error and changes nothing.
func (h *History) Restore(b []byte) error {
	var s historySnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("jobs: history snapshot: %w", err)
	}
	if s.Version != historyVersion {
		return fmt.Errorf("jobs: history snapshot: version %d, want %d", s.Version, historyVersion)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for job, runs := range s.Runs {
		for _, rec := range runs {
			if rec.Job != job {
				return fmt.Errorf("jobs: history snapshot: run %q of %q filed under %q", rec.RunID, rec.Job, job)
			}
		}
	}
	for _, runs := range s.Runs {
		for _, rec := range runs {
			h.addLocked(rec)
		}
	}
	return nil
}
