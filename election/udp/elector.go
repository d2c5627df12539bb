package udp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// Config configures an Elector.
type Config struct {
	// Protocol is the election protocol's configuration. Its Rand and
	// Incarnation are filled in by New when zero.
	Protocol protocol.Config
	// Transport carries the packets. The Elector closes it when Run returns.
	Transport Transport
	// Keyring authenticates packets; nil sends and accepts unsigned packets.
	Keyring *wire.Keyring
	// Logger receives protocol events; nil means slog.Default().
	Logger *slog.Logger
	// Payload, if set, is this node's application state (the job ledger:
	// its own and what it heard). It is read before every Tick and Step
	// and travels in heartbeats while leading, and in claims, votes and
	// Ledger handovers otherwise. It must be cheap and must not block.
	Payload func() []byte
	// OnPayload, if set, is called with every new payload heard from
	// another node (a leader's heartbeat, answer or resign; a claim, a
	// vote, a Ledger handover): sender, message type and term, whether the
	// sender holds runs (protocol.PeerPayload.Holding), the payload. It is
	// called once per change per sender, and for every message of a
	// holding sender (each one renews the hold). It runs in the run loop
	// (one event at a time; see Run), before any leadership change that
	// packet causes is reported and before any reply to that packet is
	// sent: a node that takes over already holds what its peers told it,
	// and a follower that persists the ledger here has it on disk before
	// it acknowledges it. It must not block for long; the payload must not
	// be kept or modified. It returns an error when it could not keep the
	// payload (it does not decode, or could not be saved: a full disk); in
	// quorum mode no heartbeat is then acknowledged (no ACK leaves) until a
	// later call succeeds, and every payload heard meanwhile is passed
	// again, changed or not, so that keeping it is retried: a leader must
	// not count on a ledger that this node would lose in a restart.
	OnPayload func(protocol.PeerPayload) error
	// OnDurable, if set, is called with the protocol's Durable state in
	// the run loop: whenever the highest round, term or the
	// quorum grant's binding changes, before any packet queued with the
	// change is sent; for the replay table alone (it changes with every
	// packet) at most every ReplaySaveInterval, and when Run returns. A
	// save with a new round, term or binding must be on stable storage
	// (fsynced: the state file) when it returns; one of the replay table
	// alone, only a replay floor, may skip the flush (a power cut then
	// costs a larger replay window, never the election state). While a
	// save with a new round, term or binding fails, VOTEs and ACKs are
	// held back (a node restarted from an older binding could break the
	// newer promise); claims and heartbeats still go out. A failed save of
	// the replay table alone holds nothing back. Protocol.Resume gives it
	// back after a restart.
	OnDurable func(protocol.Durable) error
	// ReplaySaveInterval is how long a changed replay table may wait for
	// OnDurable. Packets a peer sent after the last save can be replayed
	// to a restarted node until that peer's next packet. Zero means
	// DefaultReplaySaveInterval (10 s).
	ReplaySaveInterval time.Duration
	// Clock is the protocol's time source; nil means SystemClock(), which
	// counts through host suspend. Tests inside testing/synctest use
	// GoClock.
	Clock Clock
	// ExpectPeers says this node is configured with peers (unicast) or a
	// cluster size, so hearing no other node for many intervals is logged
	// at WARN ("isolated"). A lone broadcast node is not warned about.
	ExpectPeers bool
	// OnRequest, if set, is called on the leader with every client request
	// (a TRIGGER: `lanleader trigger`) that the protocol accepted
	// (authenticated if there is a keyring, not a replay, within the rate
	// limit); its result, if not nil, is sent back as the TRIGGER_ANSWER's
	// payload and must be no larger than the request's
	// (protocol.ClientQueryPad). It runs in the run loop: it must return
	// promptly.
	OnRequest func(ClientRequest) []byte
	// Wall is the wall clock stamped on the reports this node sends its
	// leader and read, as leader, to measure its followers' clock offsets
	// (clockoffset.go); nil means time.Now. Only tests shift it, to fake a
	// node whose clock is off.
	Wall func() time.Time
	// MaxClockOffset is the bound past which a follower's clock offset is
	// logged at WARN; zero means DefaultMaxClockOffset (1 s).
	MaxClockOffset time.Duration
	// OnPacket, if set, is told about every packet received: its message
	// type ("unknown" if it did not decode) and what became of it ("ok" or a
	// drop reason). Used for metrics. It must not block.
	OnPacket func(typ, result string)
}

// Elector runs the UDP election protocol on a Transport. It implements
// election.Elector.
type Elector struct {
	cfg   Config
	log   *slog.Logger
	clock Clock
	// osTimer: the Transport is a UDPTransport and Config.Clock was nil,
	// so time is real and the run loop may use a timer outside Go's
	// runtime (timerfd_linux.go).
	osTimer bool

	// mu guards node: the run loop steps it, and CanActAsLeader and
	// LeaderPayload read it from the job runner's goroutines.
	mu    sync.Mutex
	node  *protocol.Node
	addrs map[string]netip.AddrPort // node id → last source address

	notifier *election.Notifier
	initial  election.Status

	// loop runs the run loop's events one at a time (run.go): Run's own,
	// and packets and timer fires handed over on the goroutines that
	// read them (handoff.go). The fields below marked "run loop only" are
	// guarded by it.
	loop sync.Mutex
	// stopped is set when Run stops the loop: events after it are
	// ignored.
	stopped  bool
	timer    loopTimer
	probeCtx context.Context
	// delivered is, per sender, the last payload passed to OnPayload
	// and kept (run loop only).
	delivered map[string]protocol.PeerPayload
	// unkept is set while the last OnPayload call failed: ACKs are held
	// back and every payload is passed again (run loop only).
	unkept bool
	// holding is what SetHolding last set; holdCh asks the run loop to
	// pass it to the node.
	holding atomic.Bool
	holdCh  chan struct{}
	// auth and hearing log misconfiguration and deafness (authlog.go,
	// hearing_log.go); run loop only, but for auth's counter.
	auth    authLog
	hearing hearingLog
	// probes runs the leader probes (probe_run.go).
	probes *prober
	// qlog is what was last logged about quorum mode (run loop only).
	qlog quorumLog
	// publish asks the run loop to heartbeat the payload at once; one
	// pending request stands for any number.
	publish chan struct{}
	// commits are Commit calls waiting for the run loop (commit.go).
	commits chan *commitWait
	waiting []*commitWait
	// done is closed when Run returns.
	done chan struct{}
	// durable decides when OnDurable runs (durable.go; run loop only).
	durable durableSaver
	// clocks measures the peers' clock offsets (clockoffset.go).
	clocks *clockWatch
	wall   func() time.Time
}

var _ election.Elector = (*Elector)(nil)

// New validates cfg and returns an Elector. Nothing is sent until Run.
func New(cfg Config) (*Elector, error) {
	if cfg.Transport == nil {
		return nil, errors.New("udp: Config.Transport is nil")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Protocol.Rand == nil {
		cfg.Protocol.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if cfg.Protocol.Incarnation == 0 {
		cfg.Protocol.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(cfg.Protocol.Rand.Uint32()))
	}
	// Real sockets and real time (a memnet transport may be inside a
	// testing/synctest bubble, whose fake time a timerfd would not follow).
	_, sockets := cfg.Transport.(*UDPTransport)
	osTimer := sockets && cfg.Clock == nil
	if cfg.Clock == nil {
		cfg.Clock = SystemClock()
	}
	if ec, ok := cfg.Transport.(selfEchoer); ok && ec.EchoesSelf() {
		cfg.Protocol.SelfEcho = true
	}
	node, err := protocol.NewNode(cfg.Protocol, cfg.Clock.Now())
	if err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	e := &Elector{
		cfg:     cfg,
		log:     cfg.Logger,
		clock:   cfg.Clock,
		osTimer: osTimer,
		node:    node,
		addrs:   make(map[string]netip.AddrPort),
		initial: node.Status(),
		publish: make(chan struct{}, 1),
		probes:  newProber(cfg.Transport, cfg.Protocol.Timings().ProbeWait),
		commits: make(chan *commitWait),
		done:    make(chan struct{}),
		// delivered is keyed by sender, bounded like addrs.
		delivered: make(map[string]protocol.PeerPayload),
		holdCh:    make(chan struct{}, 1),
	}
	e.durable = newDurableSaver(cfg, node, cfg.Clock.Now())
	e.clocks = newClockWatch(cfg.Protocol.NodeID, cfg.Protocol.Interval, cfg.MaxClockOffset, cfg.Protocol.ForgetPeerAfter)
	e.wall = cfg.Wall
	if e.wall == nil {
		e.wall = time.Now
	}
	e.hearing.expectPeers = cfg.ExpectPeers || cfg.Protocol.ClusterSize > 0
	return e, nil
}

// Status returns this node's current view of the election.
func (e *Elector) Status() election.Status {
	if n := e.loadNotifier(); n != nil {
		return n.Status()
	}
	return onNode(e, (*protocol.Node).Status)
}

// CanActAsLeader reports whether this node leads and has fresh evidence that
// it still does: not paused, heard no better leader. The job runner asks it
// right before starting each run.
func (e *Elector) CanActAsLeader() bool {
	return onNode(e, func(n *protocol.Node) bool { return n.CanActAsLeader(e.clock.Now()) })
}

// Publish asks the leader to send its payload (Config.Payload) at once
// rather than with the next periodic heartbeat. It never blocks; requests
// made before the loop gets to them are coalesced. Wire it to the job
// runner's Cluster.Publish (udpjobs).
func (e *Elector) Publish() {
	select {
	case e.publish <- struct{}{}:
	default:
	}
}

// SetHolding says whether this node still runs jobs (the job runner's
// Cluster.SetHolding, udpjobs): while it does and does not lead, its claims,
// votes and Ledger messages say so, and it sends its Ledger on every
// heartbeat of its leader, and once more when holding ends
// (protocol.Node.SetHolding). It never blocks.
func (e *Elector) SetHolding(holding bool) {
	e.holding.Store(holding)
	select {
	case e.holdCh <- struct{}{}:
	default:
	}
}

// Succession returns what this elector promises about a deposed leader:
// SuccessionFor its cluster size.
func (e *Elector) Succession() election.Succession { return SuccessionFor(e.cfg.Protocol.ClusterSize) }

// SuccessionFor returns what the udp election with clusterSize promises
// about a deposed leader (election.Succession): in quorum mode
// (clusterSize > 0) it stops acting before a successor can be elected,
// since its lease ends before a majority may grant another; without quorum
// nothing bounds it, since a leader cut off from the others goes on
// leading on its side.
func SuccessionFor(clusterSize int) election.Succession {
	return election.Succession{Bounded: clusterSize > 0}
}

// HoldLapse returns how long a run another node said it holds counts as
// going after the last such message (protocol Timings.Hold): the job
// runner's ClusterTiming.HoldLapse (udpjobs).
func (e *Elector) HoldLapse() time.Duration { return e.cfg.Protocol.Timings().Hold }

// GatherWindow returns how long a new leader gathers its peers' ledgers
// before deciding what its predecessors missed (protocol.Config.GatherWindow):
// the job runner's ClusterTiming.Gather (udpjobs).
func (e *Elector) GatherWindow() time.Duration {
	return onNode(e, (*protocol.Node).GatherWindow)
}

// LeaderPayload returns the newest payload heard from a leader (this node's
// own while it leads), with that leader's id and term.
func (e *Elector) LeaderPayload() (leader string, term uint64, payload []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.node.LeaderPayload()
}

// Quorum returns quorum mode's state (zero when quorum mode is off).
func (e *Elector) Quorum() protocol.QuorumStatus { return onNode(e, (*protocol.Node).Quorum) }

// Stats returns the protocol's counters.
func (e *Elector) Stats() protocol.Stats { return onNode(e, (*protocol.Node).Stats) }

// onNode returns f of the protocol node, under e's lock: the one way the
// accessors read the node, which the run loop drives under the same lock.
func onNode[T any](e *Elector, f func(*protocol.Node) T) T {
	e.mu.Lock()
	defer e.mu.Unlock()
	return f(e.node)
}

func (e *Elector) loadNotifier() *election.Notifier {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.notifier
}

// Hearing returns this node's view of who hears whom: isolation, deafness,
// a rival leader, peers that do not hear, a duplicate of this node's id.
func (e *Elector) Hearing() protocol.Hearing {
	return onNode(e, func(n *protocol.Node) protocol.Hearing { return n.Hearing(e.clock.Now()) })
}

// SignedUnchecked counts signed packets this node, which has no key,
// accepted without checking: its peers use a key and drop its packets.
func (e *Elector) SignedUnchecked() uint64 { return e.auth.unchecked.Load() }

// ClockOffsets returns the clock offsets of the followers this node
// measured as leader within ForgetPeerAfter, sorted by node id
// (clockoffset.go); none on a node that has not led lately.
func (e *Elector) ClockOffsets() []ClockOffset {
	return e.clocks.offsets(e.clock.Now())
}

// MaxClockOffset is the bound past which a follower's clock offset is
// logged.
func (e *Elector) MaxClockOffset() time.Duration { return e.clocks.bound }

// selfEchoer is a Transport that knows whether it delivers the node's own
// broadcasts back to it (protocol.Config.SelfEcho).
type selfEchoer interface{ EchoesSelf() bool }
