package protocol

import (
	"bytes"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/heartbeat"
)

// Envelope is one outgoing message. To is "" for a broadcast to the
// cluster, else the node id to send to (the transport maps it to the
// address it last heard that node from).
type Envelope struct {
	To  string
	Msg Message
}

// followerState refines the follower role.
type followerState int

const (
	// following: a leader is known and heard within the detector deadline.
	following followerState = iota
	// waiting: no leader known; listen until waitUntil (start-up, or after
	// yielding to someone else's claim).
	waiting
	// backingOff: leader suspected; claim at waitUntil unless something
	// better is heard first.
	backingOff
)

// Node is one participant's protocol state machine. It is not safe for
// concurrent use: one goroutine calls Tick, Step, Resign and the accessors.
type Node struct {
	cfg Config
	tag uint16
	// lastDrop is why the last Step dropped its message ("" if accepted).
	lastDrop DropReason
	// newPeer: the message Step is handling is the first accepted from its
	// sender's incarnation.
	newPeer bool
	det     *heartbeat.Detector

	role  election.Role
	since time.Time
	quiet bool
	// now is the latest time passed in; time never goes back for the Node.
	now time.Time
	// scheduled is NextTick() as of the end of the last call, for pause
	// detection.
	scheduled time.Time
	// pausedAt is when a call last came more than PauseThreshold late.
	pausedAt time.Time

	seq uint64
	// beats counts the heartbeats this incarnation sent (Message.Beat).
	beats uint64
	// heard is the newest heartbeat of the leader this node follows (of a
	// rival, while it leads): the evidence it carries in everything it
	// sends.
	heard Evidence
	// leaderBeat is the newest Beat heard from the leader we follow.
	leaderBeat uint64
	hear       hearState
	// round is the highest election round seen in any term.
	round uint64
	// maxTerm is the highest term seen in any message (reported in Status).
	maxTerm uint64
	// maxLeaderTerm is the highest term seen from an established leader
	// (Heartbeat, Answer, or ourselves leading). Leaders with a lower term
	// are stale; claims with a term not above it are stale.
	maxLeaderTerm uint64
	// forgotLeaderTerm is maxLeaderTerm as it was before a failed quorum
	// claim reset it (tick.go): the node then follows a lower-term leader
	// a majority follows, but still corrects claims at or below it, so
	// terms keep growing across leaders.
	forgotLeaderTerm uint64

	// leader is the known leader (ourselves when leading); zero if none.
	leader     election.LeaderInfo
	leaderPrio uint8

	fstate    followerState
	waitUntil time.Time
	// relistenUntil holds off suspicion after this follower was paused.
	relistenUntil time.Time

	claimTerm uint64
	// claimSent is when the claim was first sent; claimUntil when its
	// window ends (later if its echo came late, hearing.go).
	claimSent     time.Time
	claimUntil    time.Time
	claimResendAt time.Time
	claimResent   bool
	claimPreempt  bool

	nextBeat    time.Time
	lastBeat    time.Time
	lastAnswer  time.Time
	lastCorrect time.Time

	// listenUntil: a leader that was paused does not act before it.
	listenUntil time.Time

	// t holds the durations derived from cfg (timings.go).
	t Timings
	// q is all quorum-mode bookkeeping (quorum.go).
	q quorumTracker

	peers map[string]*peer
	// replayVer counts changes of peers; durCore and durVer are
	// DurableVersion's record (durable.go).
	replayVer uint64
	durCore   durableCore
	durVer    uint64
	clients   clientLimiter
	// requests are the client Triggers accepted, for ClientRequests.
	requests []ClientRequest

	// pr is this follower's probing of its leader (probe.go).
	pr probeState
	// beatLate is how much later than an interval the leader's recent
	// heartbeats came (noteBeatGap): the probe's grace.
	beatLate time.Duration

	payload []byte
	// payloadVer counts payload changes; sentVer is the version the last
	// heartbeat of this leadership carried (handover.go).
	payloadVer uint64
	sentVer    uint64
	// payloads queues received payloads for Payloads.
	payloads []PeerPayload
	// handoverUntil ends the Ledger messages sent to the leadership we
	// follow.
	handoverUntil time.Time
	// holding: this node still runs jobs (SetHolding).
	holding   bool
	lpLeader  string
	lpTerm    uint64
	lpPayload []byte
	out       []Envelope
	stats     Stats
}

// NewNode returns a follower that knows no leader, listens for
// Misses × Interval before it may claim, and has queued a Query so a sitting
// leader answers at once. now is the caller's monotonic time.
func NewNode(cfg Config, now time.Time) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	det, err := heartbeat.NewDetector(heartbeat.DetectorConfig{
		Interval:  cfg.Interval,
		MinMisses: cfg.Misses,
		MaxMisses: cfg.MaxMisses,
		Target:    cfg.LossTarget,
		Window:    1000,
	})
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg:   cfg,
		tag:   NodeTag(cfg.NodeID),
		det:   det,
		role:  election.Follower,
		since: now,
		now:   now,
		peers: make(map[string]*peer),
		stats: Stats{
			Sent:     make(map[Type]uint64),
			Received: make(map[Type]uint64),
			Dropped:  make(map[DropReason]uint64),
		},
	}
	n.resume(cfg.Resume)
	n.t = cfg.Timings()
	n.q = newQuorumTracker(n.t, cfg.ClusterSize, now, resumedGrant(cfg.Resume.Grant))
	n.durCore = durableCore{n.round, n.maxTerm, n.q.binding()} // what Resume held
	n.fstate = waiting
	n.hear.lastPeer = now
	n.waitUntil = now.Add(n.t.Suspect)
	n.emit("", Message{Type: Query})
	n.scheduled = n.NextTick()
	return n, nil
}

// Ready returns and forgets the messages queued since the last call.
func (n *Node) Ready() []Envelope { return take(&n.out) }

// take returns what q holds and empties it: the one way a Node hands what
// it queued (Ready, Payloads, ClientRequests) to its caller.
func take[T any](q *[]T) []T {
	out := *q
	*q = nil
	return out
}

// NextTick returns the earliest time Tick must next be called. It can move
// earlier after Step; re-read it after every call.
func (n *Node) NextTick() time.Time {
	if n.quiet {
		return n.now.Add(n.cfg.Interval)
	}
	next := n.nextDeadline()
	if a := n.nextAnnounce(); !a.IsZero() && a.Before(next) {
		return a
	}
	return next
}

// nextDeadline is the role's next deadline.
func (n *Node) nextDeadline() time.Time {
	switch n.role {
	case election.Leader:
		next := n.nextBeat
		if n.q.on() && n.q.leaseEnd().Before(next) {
			next = n.q.leaseEnd()
		}
		if r := n.leaseRetryAt(n.now); !r.IsZero() && r.Before(next) {
			next = r
		}
		return next
	case election.Candidate:
		if !n.claimResent && n.claimResendAt.Before(n.claimUntil) {
			return n.claimResendAt
		}
		if n.cfg.SelfEcho && !n.hear.claimEchoed && !n.now.Before(n.claimUntil) {
			return n.claimDeafAt()
		}
		return n.claimUntil
	}
	if n.fstate == following {
		if p := n.ProbeAt(); !p.IsZero() && p.Before(n.followDeadline()) {
			return p
		}
		return n.followDeadline()
	}
	return n.waitUntil
}

// followDeadline is when a following node suspects its leader: the
// detector's deadline, counted from a probe's answer too (probe.go).
func (n *Node) followDeadline() time.Time {
	d := n.det.Deadline()
	if a := n.pr.alive.Add(n.det.Timeout()); a.After(d) {
		d = a
	}
	if n.relistenUntil.After(d) {
		return n.relistenUntil
	}
	return d
}

// Status reports role, known leader, highest term seen and when the role
// last changed (in the caller's time base).
func (n *Node) Status() election.Status {
	return election.Status{
		Node:   n.cfg.NodeID,
		Role:   n.role,
		Leader: n.leader,
		Term:   n.maxTerm,
		Since:  n.since,
	}
}

// SetPayload sets the application state a leader piggybacks on its
// heartbeats and answers (the job ledger). p is copied. It must fit the
// wire codec's payload limit (1024 bytes in wire version 2), or the
// transport cannot encode the heartbeats.
func (n *Node) SetPayload(p []byte) {
	if n.payloadVer > 0 && bytes.Equal(p, n.payload) {
		return
	}
	n.payload = append([]byte(nil), p...)
	n.payloadVer++
	if n.role == election.Leader {
		n.lpPayload = n.payload
	}
}

// LeaderPayload returns the newest payload heard from a leader (our own
// while leading), with that leader's id and term. The slice must not be
// modified.
func (n *Node) LeaderPayload() (leader string, term uint64, p []byte) {
	return n.lpLeader, n.lpTerm, n.lpPayload
}

// Stats returns a copy of the counters.
func (n *Node) Stats() Stats {
	s := n.stats.clone()
	s.LossEstimate = n.det.Loss()
	s.MissesThreshold = n.det.Misses()
	return s
}

// CanActAsLeader reports whether a job may start now: this node leads, is
// not re-listening after a pause, and its own schedule is not overdue by
// more than PauseThreshold (which would mean it is paused right now and
// has not noticed yet). In quorum mode its lease must also be valid. Check
// it right before every job start.
func (n *Node) CanActAsLeader(now time.Time) bool {
	if n.role != election.Leader || n.quiet {
		return false
	}
	if now.Before(n.listenUntil) {
		return false
	}
	if !n.q.mayAct(now) {
		return false
	}
	return !now.After(n.nextBeat.Add(n.t.PauseThreshold))
}

// emit queues m to `to` ("" = broadcast), stamping the header fields.
func (n *Node) emit(to string, m Message) {
	n.seq++
	m.Cluster = n.cfg.Cluster
	m.From = n.cfg.NodeID
	m.Incarnation = n.cfg.Incarnation
	m.Seq = n.seq
	m.Priority = n.cfg.Priority
	m.Heard = n.heard
	if n.isolated(n.now) || n.deaf(n.now) {
		m.Flags |= FlagIsolated
	}
	if n.holding && n.role != election.Leader && carriesOwnPayload(m.Type) {
		m.Flags |= FlagHolding
	}
	if n.cfg.Witness {
		m.Flags |= FlagWitness
	}
	if to == "" {
		n.sentBroadcast()
	}
	if m.Term == 0 {
		m.Term = n.maxTerm
	}
	n.stats.Sent[m.Type]++
	if m.Type == Claim {
		n.stats.ClaimsSent++
	}
	n.out = append(n.out, Envelope{To: to, Msg: m})
}

// setRole changes role, recording since.
func (n *Node) setRole(r election.Role) {
	if n.role != r {
		n.role = r
		n.since = n.now
	}
}

// setLeader changes the known leader, counting real changes.
func (n *Node) setLeader(l election.LeaderInfo, prio uint8) {
	if l.Known() && (l.ID != n.leader.ID || l.Term != n.leader.Term) {
		n.stats.LeaderChanges++
	}
	n.leader, n.leaderPrio = l, prio
}

// newestLeaderTerm is the highest leader term this node has known:
// claims at or below it are stale.
func (n *Node) newestLeaderTerm() uint64 { return max(n.maxLeaderTerm, n.forgotLeaderTerm) }

func (n *Node) observeTerm(t uint64) {
	if t > n.maxTerm {
		n.maxTerm = t
	}
	if r := TermRound(t); r > n.round {
		n.round = r
	}
}

// PausedAt returns when this node last noticed it had been paused (a Tick
// or Step more than PauseThreshold late: a stalled process, a host
// suspend); zero if never. Messages handled right after it may have waited
// in a queue through the pause.
func (n *Node) PausedAt() time.Time { return n.pausedAt }
