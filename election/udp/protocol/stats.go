package protocol

// DropReason says why Step dropped a message. Values are metric labels.
type DropReason string

// Drop reasons, counted in Stats.Dropped.
const (
	// DropOtherCluster: the message names another cluster.
	DropOtherCluster DropReason = "other_cluster"
	// DropSelf: our own broadcast came back to us.
	DropSelf DropReason = "self"
	// DropDuplicateID: another process uses our NodeID (a misconfiguration).
	DropDuplicateID DropReason = "duplicate_id"
	// DropMalformed: a required field is missing or inconsistent.
	DropMalformed DropReason = "malformed"
	// DropUnknownType: a message type this version does not know.
	DropUnknownType DropReason = "unknown_type"
	// DropUnsupported: a quorum-mode message (Vote, Ack) while quorum mode
	// is off.
	DropUnsupported DropReason = "unsupported"
	// DropStaleSeq: Seq did not grow for the sender's incarnation
	// (duplicate, reordered or replayed packet).
	DropStaleSeq DropReason = "stale_seq"
	// DropStaleIncarnation: an incarnation older than the one we know for
	// the sender, while that sender is not long silent.
	DropStaleIncarnation DropReason = "stale_incarnation"
	// DropQuiet: we resigned and no longer take part.
	DropQuiet DropReason = "quiet"
	// DropNotLeader: a client Query reached a node that does not lead;
	// only the leader answers clients.
	DropNotLeader DropReason = "not_leader"
	// DropReplayedQuery: a client Query with the same sender, incarnation
	// and nonce as one answered within the last minute (a replay).
	DropReplayedQuery DropReason = "replayed_query"
	// DropRateLimited: a client Query over the leader's answer budget.
	DropRateLimited DropReason = "rate_limited"
)

// Stats are counters since NewNode. Maps are copies owned by the caller.
type Stats struct {
	// Sent counts messages emitted, by type.
	Sent map[Type]uint64
	// Received counts messages accepted (past cluster and replay checks), by
	// type.
	Received map[Type]uint64
	// Dropped counts messages dropped, by reason.
	Dropped map[DropReason]uint64
	// Suspicions counts times this node gave up on its leader (or on
	// waiting for one) and started a backoff.
	Suspicions uint64
	// Elections counts times this node became candidate.
	Elections uint64
	// ClaimsSent counts CLAIM messages sent, retransmissions included.
	ClaimsSent uint64
	// BecameLeader counts times this node became leader.
	BecameLeader uint64
	// SteppedDown counts leaderships lost to a better leader or claim
	// (not by Resign).
	SteppedDown uint64
	// LeaderChanges counts changes of the known leader to another known
	// leader (id or term), including to and from this node.
	LeaderChanges uint64
	// Pauses counts Tick/Step calls that came more than PauseThreshold
	// after NextTick.
	Pauses uint64
	// PausedStepDown counts leaderships ended by a pause: the leader woke
	// silent for as long as followers wait before suspecting it (a
	// shorter pause only makes it listen a claim window; if it steps
	// down after that, the cause is what it heard, not the pause).
	PausedStepDown uint64
	// StaleLeaderIgnored counts heartbeats ignored because they came from a
	// leader older than the newest one known.
	StaleLeaderIgnored uint64
	// VotesGranted and VotesRefused count votes (quorum mode).
	VotesGranted, VotesRefused uint64
	// AcksRefused counts heartbeats of our leader not acked because a
	// grant to another (term, node) — or the start-up promise — was in
	// force (quorum mode).
	AcksRefused uint64
	// QuorumFailed counts claims that ended without a majority of votes.
	QuorumFailed uint64
	// LeaseLost counts leaderships ended because a majority stopped
	// acknowledging (quorum mode).
	LeaseLost uint64
	// LeaseRetries counts heartbeats a leader sent between its scheduled
	// ones because no majority answered the last and its lease would end
	// before the heartbeat after next (quorum_retry.go).
	LeaseRetries uint64
	// Probes counts probes sent to this node's leader (probe.go);
	// ProbeAnswers the answers that proved it alive; ProbeAnswersRefused
	// answers ignored (not from the leader followed, or naming no probe
	// outstanding: a replay).
	Probes, ProbeAnswers, ProbeAnswersRefused uint64
	// ProbesAnswered counts other nodes' probes this leader answered;
	// ProbeAnswersLimited those over a sender's budget; ProbesNotOurs
	// probes of another leadership (or received while not leading),
	// not answered.
	ProbesAnswered, ProbeAnswersLimited, ProbesNotOurs uint64
	// LeaderUnreachable counts suspicions raised at once because a probe
	// found the leader's port closed.
	LeaderUnreachable uint64
	// ProbeStale counts probe answers ignored because this node no longer
	// followed that leader and term.
	ProbeStale uint64
	// RivalHeartbeats counts heartbeats of leaders this node ignored: a
	// lower term than its leader's, or a better one without evidence that
	// it hears that leader.
	RivalHeartbeats uint64
	// DeafClaims counts claims abandoned because they did not come back
	// (Config.SelfEcho); DeafStepDown leaderships ended because this
	// node's own heartbeats stopped coming back.
	DeafClaims, DeafStepDown uint64
	// RejectionsSent counts FlagRejected queries sent to claimants or
	// rivals that showed no sign of hearing our live leader; Rejected
	// counts claims or leaderships this node gave up on receiving one.
	RejectionsSent, Rejected uint64
	// DuplicateStepDown counts claims or leaderships given up because a
	// process with this node's id that started first was heard.
	DuplicateStepDown uint64
	// LossEstimate is the detector's current estimate of heartbeat loss.
	LossEstimate float64
	// MissesThreshold is the detector's current suspicion threshold in
	// intervals.
	MissesThreshold int
}

func (s Stats) clone() Stats {
	c := s
	c.Sent = make(map[Type]uint64, len(s.Sent))
	for k, v := range s.Sent {
		c.Sent[k] = v
	}
	c.Received = make(map[Type]uint64, len(s.Received))
	for k, v := range s.Received {
		c.Received[k] = v
	}
	c.Dropped = make(map[DropReason]uint64, len(s.Dropped))
	for k, v := range s.Dropped {
		c.Dropped[k] = v
	}
	return c
}

// FlagPreempt is set in a Claim's Flags when the claimant preempts a live
// leader of lower priority (Config.Preempt): that leader steps down instead
// of answering with a heartbeat.
const FlagPreempt uint8 = 1 << 0

// FlagClient is set in a Query's Flags by a client that only asks who leads
// (`lanleader who`), not a node. Nodes answer it but do not remember the
// sender: it would otherwise fill the peer table, evict real followers and
// could be named successor.
const FlagClient uint8 = 1 << 1

// FlagHolding is set on the Claim, Vote and Ledger messages of a node that
// still runs jobs (SetHolding): typically a deposed leader whose
// on_leader_loss: finish runs outlive its leadership. The runs its payload
// names as its own (the job ledger marks them held) are still going; a
// message of it without the flag says it runs none. A follower relaying a
// pooled ledger sends it without the flag.
const FlagHolding uint8 = 1 << 2

// FlagReport is set in a Query a follower sends its leader when it ignores
// a better rival leader that shows no sign of hearing that leader. It is
// not answered: its evidence (Heard) is the message.
const FlagReport uint8 = 1 << 3

// FlagIsolated may be set on any type: the sender has heard no other node
// for 10 intervals, or (Config.SelfEcho) its own broadcasts do not come
// back. Nobody follows its claims or heartbeats; others report it.
const FlagIsolated uint8 = 1 << 4

// FlagRefused is set on a leader's Heartbeat for a claim window after it
// refused a preempting claim (FlagPreempt) that showed no evidence of
// hearing it: the preempting candidate yields instead of leading beside it.
const FlagRefused uint8 = 1 << 5

// FlagRejected is set in a Query a follower sends a claimant, or a better
// leader it ignores, whose evidence shows no sign of hearing the live
// leader the follower hears. Term and Leader name that leader and Heard is
// its newest heartbeat: the receiver learns that a leader lives which it
// cannot hear (a one-way loss, a half-open firewall) and does not take
// over. Raft's PreVote rejection, without votes; quorum mode has votes.
const FlagRejected uint8 = 1 << 6

// FlagWitness is set on every message of a witness (Config.Witness): a
// voter that never claims. Others never name it successor, do not count
// it among the peers whose claim would come first, and show it as a
// witness. On a Query with FlagReport it answers a client's Query
// (`lanleader who`): Leader and Term name the leader it follows.
const FlagWitness uint8 = 1 << 7
