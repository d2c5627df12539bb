package jobs

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// core is the job rules' state and decisions: what this node knows of the
// cluster's runs (its own ledger, the ones heard, holds), where each job's
// schedule stands, and the rules that decide from them. It reads no clock
// (now is an argument of every decision), starts no goroutine or process
// and writes no log: what it decides comes out as effects (a log line,
// "the ledger changed", "this node holds runs", "a job's holds changed")
// that its driver takes (takeEffects) and carries out in order. The
// Runner drives it under its lock, with timers, processes and the
// Cluster; the simulator (election/udp/udptest, through Core) drives the
// very same rules on every simulated node.
type core struct {
	// node is this node's id; killGrace the default kill grace
	// (RunnerConfig.KillGrace); timing the election's (Cluster.Timing).
	node             string
	defaultKillGrace time.Duration
	timing           ClusterTiming
	// logs writes log lines as effects.
	logs lineLog
	// effects are the effects not yet taken by the driver, in order.
	effects []effect

	jobs []*job
	byID map[uint64]*job
	// history keeps finished runs, this node's and those heard of.
	history *History

	// draining is set by Drain: no run starts any more.
	draining bool
	term     uint64 // current leadership's term, 0 if not leading
	// leadStart is when the current (or last) leadership started: the
	// takeover of every job, a job a reload adds included (takeUpLocked).
	leadStart time.Time
	// gatherUntil is the end of the current leadership's gathering window
	// (zero without one): loops a reload starts before it leave their
	// takeover decision to it too (takeUpLocked).
	gatherUntil time.Time
	// leaders remembers which node led recent terms, to name the node of
	// runs heard of in ledgers.
	leaders map[uint64]string
	// manualRuns are the manual runs in progress, by run id.
	manualRuns map[string]RunRecord
	own        map[uint64]LedgerEntry
	// peer merges every ledger adopted from leaders: per job the newest
	// (instant, then term) entry. unknown marks jobs a truncated ledger left
	// out: what its leader did with them is not known (their peer entry
	// stays: absence is no news).
	peer    map[uint64]LedgerEntry
	unknown map[uint64]bool
	// holds are the runs other nodes said they still run, by ledger id
	// (holds.go).
	holds map[uint64]hold
	// released are the last runs, by ledger id, this node as leader
	// counted interrupted because their holder said it no longer ran them
	// (holds.go).
	released map[uint64]hold
	// running counts this node's runs in progress, all jobs, and its
	// services' copies (Cluster.SetHolding).
	running int
	// gone are the jobs a reload removed while runs of theirs still go
	// on, by name: a job added back under the name is the same job
	// (matchJobs), and those runs are its own (update.go); this node
	// holds them meanwhile like any other (runsEntryLocked).
	gone map[string]*job
	// published is the own ledger, encoded at every change (ledgerChanged),
	// so the Runner's Ledger and StateLedger never wait for its lock.
	published atomic.Pointer[publishedLedger]
}

func newCore(node string, killGrace time.Duration, timing ClusterTiming, historySize int) *core {
	c := &core{
		node:             node,
		defaultKillGrace: killGrace,
		timing:           timing,
		byID:             map[uint64]*job{},
		history:          NewHistory(historySize),
		leaders:          map[uint64]string{},
		manualRuns:       map[string]RunRecord{},
		own:              map[uint64]LedgerEntry{},
		peer:             map[uint64]LedgerEntry{},
		unknown:          map[uint64]bool{},
		holds:            map[uint64]hold{},
		released:         map[uint64]hold{},
		gone:             map[string]*job{},
	}
	c.logs = lineLog{c: c}
	return c
}

// effectKind says what an effect asks of the driver.
type effectKind uint8

const (
	// effectLog: write line.
	effectLog effectKind = iota
	// effectPublish: the ledger changed (Cluster.Publish).
	effectPublish
	// effectHolding: this node now holds runs, or no longer
	// (Cluster.SetHolding(holding)).
	effectHolding
	// effectWake: the holds on job's runs changed; its scheduling loop
	// looks again.
	effectWake
	// effectHeard: a ledger was heard; services waiting for an old copy
	// look again.
	effectHeard
)

// effect is one thing the core decided that its driver carries out.
type effect struct {
	kind    effectKind
	line    LogLine
	holding bool
	job     *job
}

func (c *core) emit(e effect) { c.effects = append(c.effects, e) }

// takeEffects returns the effects not taken yet, in order, and forgets
// them.
func (c *core) takeEffects() []effect {
	out := c.effects
	c.effects = nil
	return out
}

// LogLine is a log line a job rule decided to write: its driver writes it
// (the Runner to its slog.Logger), with its level, message and attributes
// as slog takes them.
type LogLine struct {
	Level slog.Level
	Msg   string
	Attrs []any
}

// Write writes l to log.
func (l LogLine) Write(log *slog.Logger) {
	log.Log(context.Background(), l.Level, l.Msg, l.Attrs...)
}

// lineLog writes log lines as effects of its core, with slog.Logger's
// calls, so the rules read as they log.
type lineLog struct {
	c     *core
	attrs []any
}

// With returns a lineLog that adds attrs before every line's own.
func (l lineLog) With(attrs ...any) lineLog {
	return lineLog{c: l.c, attrs: append(append([]any(nil), l.attrs...), attrs...)}
}

// Log writes msg at level.
func (l lineLog) Log(_ context.Context, level slog.Level, msg string, attrs ...any) {
	l.c.emit(effect{kind: effectLog, line: LogLine{Level: level, Msg: msg, Attrs: append(append([]any(nil), l.attrs...), attrs...)}})
}

// Info writes msg at slog.LevelInfo.
func (l lineLog) Info(msg string, attrs ...any) {
	l.Log(context.Background(), slog.LevelInfo, msg, attrs...)
}

// Warn writes msg at slog.LevelWarn.
func (l lineLog) Warn(msg string, attrs ...any) {
	l.Log(context.Background(), slog.LevelWarn, msg, attrs...)
}

// Error writes msg at slog.LevelError.
func (l lineLog) Error(msg string, attrs ...any) {
	l.Log(context.Background(), slog.LevelError, msg, attrs...)
}
