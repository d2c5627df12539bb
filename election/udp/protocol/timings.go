package protocol

import "time"

// Timings are the durations the protocol derives from a Config: the one
// place each derivation is written. The Node, the udp adapter, the CLI and
// the simulator's bounds all read them from Config.Timings.
type Timings struct {
	// Interval is the leader's heartbeat period.
	Interval time.Duration
	// Suspect is Misses × Interval: how long a loss-free follower hears
	// nothing before it suspects its leader (the adaptive detector may
	// wait up to MaxMisses × Interval on a lossy link).
	Suspect time.Duration
	// ClaimWindow is how long a candidate listens after its CLAIM.
	// Config.ClaimWindow, or if zero min(10 ms, Interval/4).
	ClaimWindow time.Duration
	// ClaimResend is when, within the window, the CLAIM is sent again
	// (one loss must not lose an election): ClaimWindow/2.
	ClaimResend time.Duration
	// BackoffMax bounds the wait between suspecting and claiming (ranked
	// or randomized, see Config.BackoffMax). Config.BackoffMax, or if zero
	// Interval/2.
	BackoffMax time.Duration
	// RankStep is how much longer a follower that learnt its leader's
	// process is gone (LeaderUnreachable) waits per peer whose claim would
	// beat its own: ClaimWindow/2, time for a better peer's claim to
	// arrive, so usually one node claims.
	RankStep time.Duration
	// YieldWait is how long a node that yielded to a claim waits for the
	// claimant's first heartbeat: ClaimWindow + Interval.
	YieldWait time.Duration
	// PauseThreshold: a call this late after NextTick means we were paused
	// (or the host suspended). Config.PauseThreshold, or if zero Interval.
	PauseThreshold time.Duration
	// Relisten is how long a follower that was paused keeps listening for
	// its leader's queued heartbeats before it may suspect: Interval.
	Relisten time.Duration
	// Promise (quorum mode) is the shortest a VOTE or ACK binds the
	// voter: PromiseMisses × Interval. On a lossy link the promise adapts
	// up to MaxPromise (quorum_promise.go).
	Promise time.Duration
	// MaxPromise (quorum mode) is the longest a VOTE or ACK binds the
	// voter: max(PromiseMisses, MaxMisses) × Interval. It is the
	// start-up promise of a node that cannot know what it promised
	// before (no state file), and the longest promise a lease counts.
	MaxPromise time.Duration
	// Lease (quorum mode) is how long at most a leader may act after
	// sending the claim or heartbeat a majority answered: 4/5 of Promise,
	// the margin that tolerates clock rates differing by up to 20 % — less
	// when that majority granted shorter promises (quorum.go).
	Lease time.Duration
	// MaxClaimBackoff (quorum mode) bounds the wait after claims that
	// found no majority: Interval doubling per failure up to 16 × Interval.
	MaxClaimBackoff time.Duration
	// Gather is a new leader's gathering window: how long it collects its
	// peers' ledgers before the application decides what its predecessors
	// missed, and how long followers hand their ledger to a new leadership
	// (handover.go). Config.GatherWindow, or if zero 5 × Interval: under
	// 30 % loss a deposed leader that hears one of the new leader's first
	// five heartbeats hands over with 99 % probability.
	Gather time.Duration
	// Hold is how long a run that a deposed node said it still runs
	// (FlagHolding) counts as going after the last such message heard: 2 ×
	// Gather. The holder says it on every heartbeat of its leader, so only
	// ten lost in a row (or a dead or cut-off holder) end a hold early.
	Hold time.Duration
	// ProbeWait is how long the udp adapter waits for the answer to a
	// probe of the leader's port: Interval/2 (an ICMP answer takes a LAN
	// round trip, and the next probe is due an interval later, so probes
	// never overlap).
	ProbeWait time.Duration
	// ForgetPeerAfter is how long a silent peer is remembered (replay
	// protection, successor choice, the count of node ids heard).
	ForgetPeerAfter time.Duration
}

// Default timing constants not derived from Interval.
const (
	defaultClaimWindow = 10 * time.Millisecond // a few LAN round trips
	defaultForgetPeer  = 30 * time.Second
)

// Timings derives every protocol duration from c. Zero fields of c that
// mean "derive from Interval" are derived here and nowhere else.
func (c Config) Timings() Timings {
	t := Timings{
		Interval:        c.Interval,
		Suspect:         time.Duration(c.Misses) * c.Interval,
		ClaimWindow:     c.ClaimWindow,
		BackoffMax:      c.BackoffMax,
		PauseThreshold:  c.PauseThreshold,
		Relisten:        c.Interval,
		ProbeWait:       c.Interval / 2,
		ForgetPeerAfter: c.ForgetPeerAfter,
		MaxClaimBackoff: c.Interval << maxClaimBackoffShift,
	}
	if t.ClaimWindow == 0 {
		// A few LAN round trips, but well under the interval for very fast
		// settings.
		t.ClaimWindow = min(defaultClaimWindow, c.Interval/4)
	}
	if t.BackoffMax == 0 {
		t.BackoffMax = c.Interval / 2
	}
	if t.PauseThreshold == 0 {
		t.PauseThreshold = c.Interval
	}
	if t.ForgetPeerAfter == 0 {
		t.ForgetPeerAfter = defaultForgetPeer
	}
	t.Gather = c.GatherWindow
	if t.Gather == 0 {
		t.Gather = 5 * c.Interval
	}
	t.Hold = 2 * t.Gather
	t.ClaimResend = t.ClaimWindow / 2
	t.RankStep = t.ClaimWindow / 2
	t.YieldWait = t.ClaimWindow + c.Interval
	pm := c.PromiseMisses
	if pm == 0 {
		pm = c.Misses
	}
	t.Promise = time.Duration(pm) * c.Interval
	t.MaxPromise = time.Duration(max(pm, c.MaxMisses)) * c.Interval
	t.Lease = leaseOf(t.Promise)
	return t
}

// leaseOf is the lease a promise p supports: 4/5 of it, the margin that
// tolerates clock rates differing by up to 20 %.
func leaseOf(p time.Duration) time.Duration { return p * 4 / 5 }
