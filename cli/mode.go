package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/internal/statefile"
	"github.com/lanleader/lanleader/jobs"
	"github.com/lanleader/lanleader/metrics"
)

// Mode is an election mode that `lanleader run --mode=NAME` can use. The
// built-in static, env and udp modes are Modes; another Go module builds a
// complete lanleader binary with more modes by passing them to Main:
//
//	func main() { cli.Main(etcdmode.Mode()) }
//
// Such a mode keeps its settings under one key of the config file's
// election: section named after itself (election.etcd: {endpoints: ...})
// and prefixes its flags with its name (--etcd-endpoints), so modes built
// independently never collide.
type Mode struct {
	// Name is the value of --mode and election.mode.
	Name string
	// Summary is one line for `lanleader run --help`.
	Summary string
	// Keys are the keys this mode reads under election: beyond the common
	// ones (mode, node_id, http). The config file refuses keys no mode
	// claims. A mode from another module should claim exactly one: its Name.
	Keys []string
	// Setup registers the mode's flags on fs and returns the settings they
	// write into. It is called once each time the command tree is built, so
	// every invocation starts from fresh defaults.
	Setup func(fs *pflag.FlagSet) ModeSettings
}

// ModeSettings are one mode's settings within one invocation of a command.
type ModeSettings interface {
	// Load merges the mode's keys of the config file into the settings
	// (flags given explicitly win: src.Changed) and validates them. It
	// returns every problem at once (errors.Join), each made with
	// src.Problem so that it names the flag or the file, line and key.
	// check-config and run both call it; it must not touch the network.
	Load(src *Source) error
	// New builds the Elector. run calls it only after Load succeeded.
	// Errors are runtime failures (exit code 1) unless wrapped with
	// ConfigError (exit code 3).
	New(env Env) (*Elector, error)
	// Succession is what the mode, with these settings, promises about a
	// deposed leader (election.Succession; zero: nothing): the job runner
	// waits for a run such a leader left going by it, and check-config
	// and run warn about the jobs it cannot bound. Valid after Load.
	Succession() election.Succession
}

// Env is what run gives a mode to build its Elector with.
type Env struct {
	// Context ends when the process is told to stop. A mode that waits for
	// something at start (an address, an endpoint) waits on it.
	Context context.Context
	// NodeID is this node's id (--node-id, election.node_id, or the
	// hostname).
	NodeID string
	// Logger is the process logger, already tagged with the node id.
	Logger *slog.Logger
	// Metrics is the process's metrics registry.
	Metrics *metrics.Metrics
	// Ledger returns the job runner's ledger. A mode that can carry data
	// from the leader to the followers sends it, so that a new leader knows
	// which scheduled runs the old one started. Valid once Run is called.
	Ledger func() []byte
	// StateLedger returns the job runner's ledger as this node keeps it
	// (jobs.Runner.StateLedger: the runs it started marked as its own, not
	// the runs its process runs). A mode that keeps the ledger in a store
	// the next leader reads (etcd) writes from this one. Valid once Run is
	// called.
	StateLedger func() []byte
	// State is this node's state file, nil when there is none (--state-dir
	// empty). A mode keeps what must survive a restart in it (udp: the
	// highest round and term, the quorum grant's binding and the replay
	// table; udp_state.go).
	State *statefile.Store
	// AdoptLedger hands a ledger received from another node to the job
	// runner (jobs.Runner.AdoptLedgerFrom): from is the sender ("" if
	// unknown), word what the message says of the sender's own runs (udp:
	// udpjobs.HoldWordOf). Call it
	// before reporting a takeover to the callbacks. It returns an error
	// when the ledger could not be kept (it does not decode, or the state
	// file could not be written; logged already): a mode that acknowledges
	// ledgers must not acknowledge it.
	AdoptLedger func(from string, word jobs.HoldWord, p []byte) error
	// Request answers a client's request to the leader (`lanleader
	// trigger`); a mode that can carry requests from clients hands it
	// their sender (id and address) and payload and sends back what it
	// returns (nil: no answer).
	Request func(from, addr string, payload []byte) []byte
}

// Elector is a mode's election.Elector plus what the job runner and the
// status page can use from it. Elector and Cluster are required. The node
// counts as joined (/readyz, systemd's READY=1) once it leads or knows a
// leader; an Elector whose followers never learn the leader also
// implements Joined() bool.
type Elector struct {
	election.Elector
	// Cluster is what the job runner needs of the election (jobs.Cluster:
	// the guard, the start gate, where the ledger goes, holding, timing):
	// jobs.Alone(Elector) for a mode that coordinates nothing between
	// nodes. The daemon refuses an Elector without one.
	Cluster jobs.Cluster
	// Flush, if set, writes out at once what Cluster.Publish would send
	// and has not yet (a store's ledger writes), trying until ctx ends.
	// The daemon calls it at a stop once the runs have ended and before
	// the elector resigns, so the next leader reads how they ended.
	Flush func(ctx context.Context) error
	// View, if set, returns the mode's own part of /status (JSON).
	View func() any
	// RefuseRequests says the mode's client requests (Env.Request) come
	// unauthenticated, from anyone on the LAN, and its config does not
	// accept that: every request is refused (trigger.Handler.Refuse).
	RefuseRequests bool
	// Why, if set, says why this node stopped leading (for the "stopped
	// leading" log line): called from OnStartedLeading to note the state
	// (its answer ignored) and from OnStoppedLeading, comparing. Empty
	// means unknown.
	Why func() string
	// Nodes, if set, returns the other nodes heard, for the status page.
	Nodes func() []httpapi.NodeView
	// Quorum, if set, returns quorum mode's state for the status page.
	Quorum func() httpapi.QuorumView
}

// BuiltinModes returns the modes every lanleader binary has: static, env
// and udp.
func BuiltinModes() []Mode {
	return []Mode{staticMode(), envMode(), udpMode()}
}

// checkModes panics on duplicate mode names or keys: a programming error in
// the binary that registered them.
func checkModes(modes []Mode) {
	names := map[string]bool{}
	keys := map[string]string{}
	for _, k := range commonElectionKeys {
		keys[k] = "lanleader"
	}
	for _, m := range modes {
		if m.Name == "" || m.Setup == nil {
			panic(fmt.Sprintf("cli: mode %q needs a Name and a Setup", m.Name))
		}
		if names[m.Name] {
			panic(fmt.Sprintf("cli: mode %q registered twice", m.Name))
		}
		names[m.Name] = true
		for _, k := range m.Keys {
			if other, dup := keys[k]; dup {
				panic(fmt.Sprintf("cli: election.%s claimed by both %s and %s", k, other, m.Name))
			}
			keys[k] = m.Name
		}
	}
}
