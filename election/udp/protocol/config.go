package protocol

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Config configures one Node. Start from DefaultLANConfig and set NodeID,
// Cluster, Incarnation and Rand. Every node of a cluster should use the same
// Interval, Misses, ClaimWindow and BackoffMax: the timing bounds in
// docs/protocol.md assume it.
type Config struct {
	// NodeID names this node; unique in the cluster, 1..64 bytes (the wire
	// codec's limit).
	NodeID string
	// Cluster is the cluster name; messages of other clusters are dropped.
	// 1..64 bytes.
	Cluster string
	// Priority orders nodes of equal term: higher wins claims and backs off
	// less before claiming. 0..255.
	Priority uint8
	// Addr is this node's address as peers see it, reported in Status while
	// leading. Optional, informational.
	Addr string

	// Interval is the heartbeat period of a leader. Followers suspect a
	// leader after Misses × Interval of silence.
	Interval time.Duration
	// Misses is how many heartbeat intervals of silence make a follower
	// suspect its leader on a loss-free link (the minimum threshold).
	Misses int
	// MaxMisses caps the adaptive threshold: on a lossy link the follower
	// raises Misses up to MaxMisses so that loss does not topple a healthy
	// leader. MaxMisses == Misses gives a fixed VRRP-like threshold.
	MaxMisses int
	// LossTarget is the accepted probability, per heartbeat slot, that
	// losses alone make a follower suspect a live leader (see
	// heartbeat.DetectorConfig.Target). Used only when MaxMisses > Misses.
	LossTarget float64
	// ClaimWindow is how long a candidate waits after its CLAIM for a better
	// claim or a live leader's heartbeat before it leads. A few LAN round
	// trips, well under Interval: it adds directly to failover time. Zero
	// means min(10 ms, Interval/4), so it scales down with a fast Interval.
	ClaimWindow time.Duration
	// BackoffMax bounds the wait between suspecting the leader and
	// claiming. Without quorum, a follower that suspects the leader it
	// followed waits the probe grace plus ClaimWindow/2 per known peer
	// that would win a claim against it (unreachable.go); at start-up,
	// after yielding to a claim and in quorum mode the wait is drawn at
	// random, weighted by priority (VRRP's skew time). Zero means
	// Interval/2, so it scales when Interval is changed.
	BackoffMax time.Duration
	// PauseThreshold: a call to Tick or Step that comes more than this after
	// NextTick means this process was paused or starved. A leader then sends
	// a heartbeat at once and does not act as leader (CanActAsLeader false)
	// for one ClaimWindow, long enough to hear a rival that was elected
	// meanwhile. Zero means Interval. At most (Misses-1) × Interval, since a
	// longer unnoticed pause could let followers elect someone else.
	PauseThreshold time.Duration
	// Preempt makes this node claim leadership from a sitting leader of
	// lower priority (VRRP preemption). Off by default: a better node that
	// joins follows the sitting leader, which avoids needless failovers.
	Preempt bool
	// ClusterSize turns on quorum mode when positive: the number of
	// voters in the cluster (witnesses included). A claim then needs VOTEs
	// from a majority (ClusterSize/2+1, the claimant included), a leader
	// may act only while a majority ACKs its heartbeats (its lease), and a
	// node that voted or acked will not vote for another claim for its
	// promise (PromiseMisses). The minority side of a partition then has
	// no leader at all. 0: no quorum, a leader per connected side. Preempt
	// is not supported with quorum.
	ClusterSize int
	// Witness makes this node a voter that never leads (quorum mode only:
	// ClusterSize counts it): it votes and acks, keeps its promises, and
	// follows the leader like any node, but never claims. Every message it
	// sends says so (FlagWitness), so the others never name it successor,
	// never wait for its claim, and show it as a witness.
	Witness bool
	// SelfEcho says the transport delivers this node's own broadcasts back
	// to it (a broadcast socket on Linux does). The node then knows when
	// it cannot receive: a candidate leads only if it heard its own claim
	// come back, and a leader that hears none of its own heartbeats for
	// Misses intervals steps down. Off: nothing is assumed.
	SelfEcho bool
	// PromiseMisses (quorum mode): a VOTE or ACK binds the voter for at
	// least PromiseMisses × Interval, and a leader's lease is 4/5 of what
	// a majority promised, from the send time of the heartbeat it acked.
	// On a lossy link the promise adapts, like the detector's threshold,
	// up to max(PromiseMisses, MaxMisses) intervals with target LossTarget
	// (quorum_promise.go), so loss lengthens failover instead of ending
	// leases. Zero means Misses. PromiseMisses ≥ MaxMisses fixes it.
	PromiseMisses int
	// GatherWindow is how long a new leader gathers its peers' ledgers
	// (Ledger messages, and the payloads of claims, votes and a deposed
	// leader's heartbeats) before the application decides what its
	// predecessors missed; followers send Ledger messages to a new
	// leadership for as long. Zero means 5 × Interval.
	GatherWindow time.Duration
	// Resume is this node's Durable state from its previous life (the
	// state file), zero for a cold start: it claims above Resume.Round.
	Resume Durable

	// Incarnation identifies this process start; it must be greater than
	// the incarnation of any earlier start of the same NodeID, so peers can
	// tell a restart (accepted) from a replay (dropped). Use
	// NewIncarnation(time.Now().UnixMilli(), random). Must not be zero.
	Incarnation uint64
	// ForgetPeerAfter: a peer's lower incarnation (its clock went back, or
	// a replay) is accepted only after that peer has been silent this long.
	// Also the age after which a silent peer is no longer named successor.
	// Zero means 30 s. At least Misses × Interval.
	ForgetPeerAfter time.Duration
	// MaxPeers bounds the per-peer replay table; the longest-silent entry
	// is evicted when full. Zero means 256.
	MaxPeers int

	// Rand is the node's only source of randomness (backoff draws). It must
	// be seeded by the caller and is used only from the Node's calls.
	Rand *rand.Rand
}

// DefaultLANConfig returns a Config tuned for one LAN segment. NodeID,
// Cluster, Incarnation and Rand must still be set.
func DefaultLANConfig() Config {
	return Config{
		Cluster:  "default",              // clusters sharing a LAN must pick distinct names
		Priority: 100,                    // VRRP's default backup priority; 255 is best
		Interval: 200 * time.Millisecond, // leader heartbeats 5×/s
		// 3 silent intervals make a loss-free follower suspect the leader
		// (VRRP's master-down multiple); failover about 0.6-0.8 s.
		Misses: 3,
		// On lossy links the threshold adapts up to 10 intervals (2 s), so
		// even 20 % loss costs a slower failover, not flapping.
		MaxMisses: 10,
		// At most one in a million heartbeat slots may look like a dead
		// leader through loss alone: about 0.4 suspicions/follower/day.
		LossTarget:  defaultLossTarget,
		ClaimWindow: 0, // min(10 ms, Interval/4): a few LAN round trips
		BackoffMax:  0, // Interval/2 = 100 ms
		// A tick one interval late means we were paused: re-listen.
		PauseThreshold:  0,                // Interval = 200 ms
		Preempt:         false,            // no failover just because a better node joined
		ForgetPeerAfter: 30 * time.Second, // accept a peer's older incarnation after 30 s of silence
		MaxPeers:        256,              // replay table entries
		ClusterSize:     0,                // no quorum: no store, no fixed membership
		PromiseMisses:   0,                // quorum promise: Misses intervals, up to MaxMisses under loss
	}
}

const (
	maxIDLen    = 64
	maxMisses   = 1000
	defaultPeer = 256
)

// Validate reports the first problem with c, naming the field.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.NodeID == "":
		return errors.New("protocol: config NodeID must not be empty")
	case len(c.NodeID) > maxIDLen:
		return fmt.Errorf("protocol: config NodeID is %d bytes, at most %d allowed", len(c.NodeID), maxIDLen)
	case c.Cluster == "":
		return errors.New("protocol: config Cluster must not be empty")
	case len(c.Cluster) > maxIDLen:
		return fmt.Errorf("protocol: config Cluster is %d bytes, at most %d allowed", len(c.Cluster), maxIDLen)
	case c.Interval <= 0:
		return fmt.Errorf("protocol: config Interval must be positive, got %v", c.Interval)
	case c.Misses < 2:
		return fmt.Errorf("protocol: config Misses must be at least 2, got %d", c.Misses)
	case c.Misses > maxMisses:
		return fmt.Errorf("protocol: config Misses must be at most %d, got %d", maxMisses, c.Misses)
	case c.MaxMisses < c.Misses:
		return fmt.Errorf("protocol: config MaxMisses (%d) must be at least Misses (%d)", c.MaxMisses, c.Misses)
	case c.MaxMisses > maxMisses:
		return fmt.Errorf("protocol: config MaxMisses must be at most %d, got %d", maxMisses, c.MaxMisses)
	case c.MaxMisses > c.Misses && !(c.LossTarget > 0 && c.LossTarget < 1):
		return fmt.Errorf("protocol: config LossTarget must be in (0,1) when MaxMisses > Misses, got %v", c.LossTarget)
	case c.ClaimWindow <= 0:
		return fmt.Errorf("protocol: config ClaimWindow must be positive, got %v", c.ClaimWindow)
	case c.ClaimWindow*2 > c.Interval:
		return fmt.Errorf("protocol: config ClaimWindow (%v) must be at most half of Interval (%v): it is a few round trips, not an interval", c.ClaimWindow, c.Interval)
	case c.BackoffMax < 0:
		return fmt.Errorf("protocol: config BackoffMax must not be negative, got %v", c.BackoffMax)
	case c.BackoffMax > c.Interval:
		return fmt.Errorf("protocol: config BackoffMax (%v) must be at most Interval (%v)", c.BackoffMax, c.Interval)
	case c.PauseThreshold <= 0:
		return fmt.Errorf("protocol: config PauseThreshold must be positive, got %v", c.PauseThreshold)
	case c.PauseThreshold > time.Duration(c.Misses-1)*c.Interval:
		return fmt.Errorf("protocol: config PauseThreshold (%v) must be at most (Misses-1)×Interval (%v)", c.PauseThreshold, time.Duration(c.Misses-1)*c.Interval)
	case c.Incarnation == 0:
		return errors.New("protocol: config Incarnation must not be zero (use NewIncarnation)")
	case c.ForgetPeerAfter < time.Duration(c.Misses)*c.Interval:
		return fmt.Errorf("protocol: config ForgetPeerAfter (%v) must be at least Misses×Interval (%v)", c.ForgetPeerAfter, time.Duration(c.Misses)*c.Interval)
	case c.MaxPeers < 1:
		return fmt.Errorf("protocol: config MaxPeers must be positive, got %d", c.MaxPeers)
	case c.ClusterSize < 0 || c.ClusterSize > 255:
		return fmt.Errorf("protocol: config ClusterSize must be 0 (no quorum) or 1..255, got %d", c.ClusterSize)
	case c.PromiseMisses < c.Misses || c.PromiseMisses > maxMisses:
		return fmt.Errorf("protocol: config PromiseMisses (%d) must be in Misses..%d (0 means Misses)", c.PromiseMisses, maxMisses)
	case c.GatherWindow < 0 || c.GatherWindow > 100*c.Interval:
		return fmt.Errorf("protocol: config GatherWindow (%v) must be in 0..100×Interval (%v)", c.GatherWindow, 100*c.Interval)
	case c.ClusterSize > 0 && c.Preempt:
		return errors.New("protocol: config Preempt is not supported with ClusterSize (quorum mode)")
	case c.Witness && c.ClusterSize == 0:
		return errors.New("protocol: config Witness needs ClusterSize (quorum mode): a witness only votes and acks")
	case c.Rand == nil:
		return errors.New("protocol: config Rand must be set (a seeded *rand.Rand)")
	}
	return nil
}

// withDefaults fills the zero values that mean "derive" (see Timings).
func (c Config) withDefaults() Config {
	t := c.Timings()
	c.ClaimWindow = t.ClaimWindow
	c.BackoffMax = t.BackoffMax
	c.PauseThreshold = t.PauseThreshold
	c.ForgetPeerAfter = t.ForgetPeerAfter
	if c.MaxPeers == 0 {
		c.MaxPeers = defaultPeer
	}
	if c.MaxMisses == 0 {
		c.MaxMisses = c.Misses
	}
	if c.PromiseMisses == 0 {
		c.PromiseMisses = c.Misses
	}
	return c
}

// defaultLossTarget is DefaultLANConfig's LossTarget, also the probes'
// target when LossTarget is unset (a fixed detector threshold).
const defaultLossTarget = 1e-6

// NewIncarnation builds an incarnation from the wall clock at process start
// (Unix milliseconds) and 16 random bits: later starts get larger values,
// and two starts in the same millisecond still differ. This is the only
// place the wall clock enters the protocol, and only as an ordering hint.
func NewIncarnation(unixMilli int64, random uint16) uint64 {
	if unixMilli < 0 {
		unixMilli = 0
	}
	inc := uint64(unixMilli)<<16 | uint64(random)
	if inc == 0 {
		inc = 1
	}
	return inc
}
