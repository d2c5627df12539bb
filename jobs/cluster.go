package jobs

import (
	"context"
	"time"

	"github.com/lanleader/lanleader/election"
)

// Cluster is what a Runner needs of the election it runs under, besides
// the leadership callbacks: the guard, the start gate, where the ledger
// goes, whether this node holds runs, and the election's timing. NewRunner
// takes one, so a Runner is never built with part of it left out:
//
//   - udp: udpjobs.Cluster (election/udp/udpjobs);
//   - etcd: the etcd mode's (election/etcd/etcdcli);
//   - a mode that coordinates nothing between nodes (static, env, a
//     library's own elector): Alone.
//
// Ledgers travel the other way through the Runner's own methods: an
// elector that hears one calls AdoptLedgerFrom (before it reports a
// takeover) and one that sends one reads Ledger.
type Cluster interface {
	// MayAct reports whether this node may act as leader now: the guard,
	// asked as every run is decided and again right before every attempt
	// execs (after Commit). udp: CanActAsLeader (it leads, its quorum
	// lease holds, it was not paused). It is called without the Runner's
	// lock.
	MayAct() bool
	// Commit records e, the running entry of a run of the job (or service
	// ledger name) named name, in the cluster before its process starts.
	// nil means the entry is recorded as well as the cluster can record
	// it, and the run may start; an error means it does not start. udp in
	// quorum mode: a majority acknowledged a heartbeat carrying it, so any
	// later leader knows it; without quorum: the heartbeat carrying it was
	// sent; etcd: the entry is written in a transaction guarded by the
	// leadership; Alone: nothing to do. ctx ends with the leadership; Commit
	// must return promptly after it does.
	Commit(ctx context.Context, name string, e LedgerEntry) error
	// Publish is told that the ledger changed (Runner.Ledger has the new
	// one), synchronously, right after a run is recorded running and
	// before its process starts, so the cluster can send it at once. It
	// must not block nor call back into the Runner except Ledger and
	// StateLedger.
	Publish()
	// SetHolding is told whether any run (or service copy) of this node is
	// going: true when the first starts, false when the last ends (after
	// the ledger shows its outcome). udp: a leader deposed without
	// stopping then tells its successor, for as long as its runs go on,
	// that it still runs them. Called with the Runner's lock held: it must
	// not block nor call back into the Runner.
	SetHolding(holding bool)
	// Timing returns the election's figures the job rules use. NewRunner
	// reads it once.
	Timing() ClusterTiming
}

// ClusterTiming is what the job rules need to know of an election's
// timing and promises.
type ClusterTiming struct {
	// Gather is the gathering window of a new leadership: the decisions
	// about instants that fell due before the takeover (a misfire run, the
	// rerun of an interrupted run) wait this long, while ledgers from
	// peers keep arriving; a deposed leader that was still running
	// instants tells its successor in that time. Instants due after the
	// takeover are not delayed. Zero decides at once. udp:
	// Elector.GatherWindow.
	Gather time.Duration
	// HoldLapse is how long a run another node said it still runs counts
	// as going after the last such word. Zero: holds lapse at once, so
	// other nodes' runs are never waited for. udp: Elector.HoldLapse.
	HoldLapse time.Duration
	// Succession is the mode's promise about a deposed leader: with it, a
	// leader waits for a run its predecessor left running until that run
	// can no longer be going (quiet.go) before it concludes it
	// interrupted, reruns it, or starts another run of its job under
	// overlap: skip. Zero bounds nothing: the run is concluded at the
	// takeover.
	Succession election.Succession
}

// Alone returns the Cluster of a mode that coordinates nothing between
// nodes (static, env, or an elector of one's own): this node may act while
// el says it leads; a run is recorded nowhere else before it starts; the
// ledger goes nowhere; no window, no hold, no bound on a deposed leader.
func Alone(el election.Elector) Cluster { return alone{el} }

type alone struct{ el election.Elector }

func (a alone) MayAct() bool                                      { return a.el.Status().IsLeader() }
func (a alone) Commit(context.Context, string, LedgerEntry) error { return nil }
func (a alone) Publish()                                          {}
func (a alone) SetHolding(bool)                                   {}
func (a alone) Timing() ClusterTiming                             { return ClusterTiming{} }
