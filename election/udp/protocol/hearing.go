package protocol

import (
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
)

// Hearing: who hears whom. A node that cannot receive (a host firewall
// dropping inbound UDP is the common case) must neither take leadership
// from a live leader nor go unnoticed. Four mechanisms, all in this file
// and evidence.go:
//
//   - Evidence: every message carries the newest leader heartbeat its
//     sender heard (Message.Heard). A leader or a follower of a live
//     leader does not give way to a better leader whose evidence does not
//     show it hears that live leader (evidence.go).
//   - Self echo (Config.SelfEcho): where the transport loops this node's
//     broadcasts back, a candidate leads only if it heard its own claim,
//     and a leader that stops hearing its own heartbeats steps down.
//   - Isolation: a node that accepted nothing from any other node for
//     isolatedAfter says so in every message it sends (FlagIsolated).
//   - Judging peers: a node that keeps sending while showing no sign of
//     hearing our leader is reported (Hearing.DeafPeers).

// isolatedIntervals: heard from no other node for this many intervals
// makes a node isolated.
const isolatedIntervals = 10

// forgetIntervals: a rival leader, a deaf peer or a duplicate of our id
// not heard for this many intervals is no longer reported.
const forgetIntervals = 30

// Hearing is this node's view of who hears whom, for logs, /status and
// metrics. Times are in the caller's monotonic time base.
type Hearing struct {
	// LastHeard is when a message from another node was last accepted
	// (start-up if never).
	LastHeard time.Time
	// SilentFor is how long before now that was.
	SilentFor time.Duration
	// Isolated: no message from any other node for 10 intervals. Alone
	// in a one-node cluster is isolated too.
	Isolated bool
	// Deaf: Config.SelfEcho is on and a broadcast of this node has not
	// come back for an interval: it cannot receive.
	Deaf bool
	// Rival is the last leader whose heartbeats this node ignores, heard
	// within the last 30 intervals; zero if none.
	Rival Rival
	// DeafPeers are nodes that keep sending but show no sign of hearing
	// this node's leader, sorted by id.
	DeafPeers []DeafPeer
	// Duplicate is set while another process with this node's id is
	// heard.
	Duplicate Duplicate
}

// Rival is a leader that keeps heartbeating while this node ignores it: a
// lower term than the leader this node knows (a node that cannot hear the
// cluster, a partition), or a higher one that shows no evidence of hearing
// it.
type Rival struct {
	ID   string
	Addr string
	Term uint64
	// Higher: the rival's term is above the known leader's.
	Higher bool
	// At is when it was last heard.
	At time.Time
}

// DeafPeer is a node that sends but does not hear.
type DeafPeer struct {
	ID   string
	Addr string
	// SelfReported: the node says it is isolated (FlagIsolated); otherwise
	// its evidence has lagged behind our leader's heartbeats for a while.
	SelfReported bool
	// Since is when this node first saw it so.
	Since time.Time
}

// Duplicate is another process using this node's id.
type Duplicate struct {
	// Addr is where its messages come from; empty when none is heard.
	Addr        string
	Incarnation uint64
	// First: this process started first (lower incarnation) and keeps
	// its role; otherwise this node does not lead while it hears the other.
	// Without quorum only: see Withheld.
	First bool
	// Withheld: quorum mode, where a majority is counted by node id and
	// two processes with one id could grant twice: this process neither
	// votes, acknowledges, claims nor leads for the rest of its life
	// (Node.twinned), and the duplicate stays reported.
	Withheld bool
	At       time.Time
}

// hearState is the Node's bookkeeping for Hearing.
type hearState struct {
	lastPeer time.Time
	// echoWant is when the oldest broadcast not yet heard back was sent
	// (SelfEcho); zero when the last one came back.
	echoWant    time.Time
	claimEchoed bool
	deafClaims  int
	// reflected is when another node last showed fresh evidence of this
	// node's leadership; rivalSince when the current better rival without
	// evidence was first heard (both while leading).
	reflected  time.Time
	rivalSince time.Time
	rival      Rival
	deafPeers  map[string]*deafPeer
	dup        Duplicate
	dupQueryAt time.Time
	// twin is set once another live process with our id proved itself
	// (onDuplicate), for the rest of this process's life.
	twin bool
	// proofs holds, per incarnation of another process with our id, its
	// last proof (onDuplicate).
	proofs   map[uint64]proof
	reportAt time.Time
	// rivalReportAt limits rival reports on their own: a presence report
	// just sent must not delay one (the leader decides within an interval).
	rivalReportAt time.Time
	// refuseUntil: heartbeats until then carry FlagRefused (a preempting
	// claim without evidence was refused).
	refuseUntil time.Time
	// rejectAt limits the rejections this follower sends (reject.go);
	// rejections counts those this node received since it last followed
	// a leader, for its growing retry wait.
	rejectAt   time.Time
	rejections int
	// rejectedSince: while leading, when a rejection first came (reject.go).
	rejectedSince time.Time
}

type deafPeer struct {
	DeafPeer
	staleSince, lastStale, lastHeard time.Time
	flagged                          bool
}

func (n *Node) forgetAfter() time.Duration { return forgetIntervals * n.cfg.Interval }

// Hearing returns this node's view of who hears whom at now.
func (n *Node) Hearing(now time.Time) Hearing {
	h := Hearing{LastHeard: n.hear.lastPeer, SilentFor: now.Sub(n.hear.lastPeer), Isolated: n.isolated(now), Deaf: n.deaf(now)}
	if r := n.hear.rival; r.ID != "" && now.Sub(r.At) < n.forgetAfter() {
		h.Rival = r
	}
	for id, p := range n.hear.deafPeers {
		if now.Sub(p.lastHeard) >= n.forgetAfter() {
			delete(n.hear.deafPeers, id)
			continue
		}
		if p.flagged {
			h.DeafPeers = append(h.DeafPeers, p.DeafPeer)
		}
	}
	slices.SortFunc(h.DeafPeers, func(a, b DeafPeer) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	if d := n.hear.dup; d.Incarnation != 0 && (now.Sub(d.At) < n.forgetAfter() || n.twinned()) {
		h.Duplicate = d
		h.Duplicate.Withheld = n.twinned()
	}
	return h
}

// isolated: nothing accepted from another node for isolatedIntervals
// (followers tell their leader they hear it, see presence).
func (n *Node) isolated(now time.Time) bool {
	return now.Sub(n.hear.lastPeer) >= isolatedIntervals*n.cfg.Interval
}

// deaf: SelfEcho is on and a broadcast has not come back for an interval.
// Loopback delivery takes microseconds, but on a loaded host the echo
// waits for the CPU like any packet, tens of milliseconds at job starts:
// only an echo missing for as long as a heartbeat period means the node
// cannot receive.
func (n *Node) deaf(now time.Time) bool {
	return n.cfg.SelfEcho && !n.hear.echoWant.IsZero() && now.Sub(n.hear.echoWant) >= n.cfg.Interval
}

// sent records a broadcast for the self-echo check.
func (n *Node) sentBroadcast() {
	if n.cfg.SelfEcho && n.hear.echoWant.IsZero() {
		n.hear.echoWant = n.now
	}
}

// onEcho handles our own broadcast coming back: the receive path works.
// A candidate's claim that comes back late (the receive goroutine waited
// for the CPU: a loaded host, a job starting) is not lost: whatever the
// peers answered is queued behind it and just as late, so the window is
// extended to half a claim window after the echo, time for an answer's
// round trip, instead of the candidate giving up as if it were deaf.
func (n *Node) onEcho(m *Message) {
	n.hear.echoWant = time.Time{}
	n.hear.deafClaims = 0
	if m.Type == Claim && n.role == election.Candidate && m.Term == n.claimTerm {
		n.hear.claimEchoed = true
		if end := n.now.Add(n.t.ClaimWindow / 2); end.After(n.claimUntil) {
			n.claimUntil = end
		}
	}
}

// claimDeafAt is when a candidate whose claim has not come back counts
// itself deaf (deaf's limit: an interval after it was sent) and gives the
// claim up. Before that, a missing echo is only late.
func (n *Node) claimDeafAt() time.Time {
	return n.claimSent.Add(n.cfg.Interval)
}

// deafRetry is how long a node that found itself deaf waits before it
// tries again: 2, 4, 8, then 16 intervals, so a deaf node costs O(1)
// packets per several intervals.
func (n *Node) deafRetry() time.Duration {
	return n.cfg.Interval << min(n.hear.deafClaims, 4)
}

// heardPeer records an accepted message from another node and judges
// whether that node hears our leader.
func (n *Node) heardPeer(now time.Time, m *Message) {
	n.hear.lastPeer = now
	if p := n.peers[m.From]; p != nil {
		p.witness = m.Flags&FlagWitness != 0
	}
	if n.role == election.Leader && n.hearsUs(m.Heard) {
		n.hear.reflected = now
	}
	n.judgePeer(now, m)
}

// judgePeer flags m's sender as deaf when it says it is isolated, or when
// it keeps sending heartbeats, claims or queries whose evidence lags
// behind the live leader this node hears, for 2×Misses intervals.
func (n *Node) judgePeer(now time.Time, m *Message) {
	if !n.leaderLive(now) || m.From == n.leader.ID {
		return
	}
	if n.hear.deafPeers == nil {
		n.hear.deafPeers = make(map[string]*deafPeer)
	}
	p := n.hear.deafPeers[m.From]
	fresh := n.hearsUs(m.Heard)
	if p == nil {
		if fresh || len(n.hear.deafPeers) >= n.cfg.MaxPeers {
			return
		}
		p = &deafPeer{DeafPeer: DeafPeer{ID: m.From}}
		n.hear.deafPeers[m.From] = p
	}
	p.Addr, p.lastHeard = m.Addr, now
	switch {
	case m.Flags&FlagIsolated != 0:
		if !p.flagged {
			p.Since = now
		}
		p.flagged, p.SelfReported = true, true
	case fresh:
		delete(n.hear.deafPeers, m.From)
	case m.Type == Heartbeat || m.Type == Claim || m.Type == Query:
		window := 2 * time.Duration(n.cfg.Misses) * n.cfg.Interval
		if p.staleSince.IsZero() || now.Sub(p.lastStale) > 4*window {
			p.staleSince = now
		}
		p.lastStale = now
		if !p.flagged && now.Sub(p.staleSince) >= window {
			p.flagged, p.Since = true, now
		}
	}
}

// leaderLive reports whether this node leads, or follows a leader it has
// heard within the detector deadline.
func (n *Node) leaderLive(now time.Time) bool {
	switch n.role {
	case election.Leader:
		return true
	case election.Follower:
		return n.fstate == following && now.Before(n.followDeadline())
	}
	return false
}

// noteRival records a leader whose heartbeat this node ignores.
func (n *Node) noteRival(now time.Time, m *Message) {
	n.stats.RivalHeartbeats++
	n.hear.rival = Rival{ID: m.From, Addr: m.Addr, Term: m.Term, Higher: m.Term > n.leader.Term, At: now}
}

// onDuplicate handles a message from another process using our node id.
// Such a message may be a live process's (two nodes configured with one
// id) or an old one of a previous process of this node, captured and
// replayed: the incarnation alone cannot tell, and a replay must not
// depose us. So every such message is answered, at most once per
// interval, with a broadcast Query naming its incarnation (Nonce), and
// only a Query naming ours counts: it was sent after this process
// started, by a process that hears us (and a replay of it is stale by its
// Seq). A live process proves itself within a round trip, since it
// answers our messages the same way. Then the process that started first
// (lower incarnation) keeps its role, and the newer one does not lead
// while it hears the first. Both observe each other's terms, so they
// never share one.
func (n *Node) onDuplicate(now time.Time, m *Message) {
	if n.hear.dupQueryAt.IsZero() || now.Sub(n.hear.dupQueryAt) >= n.cfg.Interval {
		n.hear.dupQueryAt = now
		n.emit("", Message{Type: Query, Leader: n.leader.ID, Nonce: m.Incarnation})
	}
	if m.Type != Query || m.Nonce != n.cfg.Incarnation {
		return // names no process live since we started: proves nothing
	}
	if p, ok := n.hear.proofs[m.Incarnation]; ok && m.Seq <= p.seq {
		return // that proof replayed
	}
	n.noteProof(m.Incarnation, proof{seq: m.Seq, at: now})
	n.observeTerm(m.Term)
	n.hear.twin = true
	first := n.cfg.Incarnation < m.Incarnation
	n.hear.dup = Duplicate{Addr: m.Addr, Incarnation: m.Incarnation, First: first, At: now}
	if (!first || n.twinned()) && n.role != election.Follower {
		n.stats.DuplicateStepDown++
		n.wait(now, n.t.YieldWait)
	}
}

// twinned reports whether this process takes no part in quorum mode's
// elections because another live process with its id proved itself, at
// any time in its life: majorities are counted by node id, and two
// processes with one id could each grant a different candidate (or lease)
// the same id's vote. Both processes withhold once they have heard each
// other, and one that heard the other withholds even if the other did
// not hear it: then only one of them grants. Hearing each other once is
// enough, however long they are apart afterwards (a partition between
// them is exactly when they would split a vote). What remains: two
// processes that never heard each other at all. Without quorum nothing
// is counted: the process that started first keeps its role (barred).
// To take part again, the process must be restarted once its id is
// unique.
func (n *Node) twinned() bool { return n.hear.twin && n.q.on() }

// reproveIntervals: while another live process with our id is reported,
// this node names it in a broadcast Query once per this many intervals.
const reproveIntervals = 5

// reprove keeps a duplicate heard for as long as both processes run and
// hear each other: while the other proved itself within forgetAfter, a
// broadcast Query naming it goes out every reproveIntervals, which it
// answers the same way (onDuplicate), proving each to the other again.
// Followers otherwise broadcast only at their start and when a leader
// changes, so two followers sharing an id would stop hearing each other
// within seconds and the ERROR would stop while both still run.
func (n *Node) reprove(now time.Time) {
	d := n.hear.dup
	if n.quiet || d.Incarnation == 0 || now.Sub(d.At) >= n.forgetAfter() ||
		now.Sub(n.hear.dupQueryAt) < reproveIntervals*n.cfg.Interval {
		return
	}
	n.hear.dupQueryAt = now
	n.emit("", Message{Type: Query, Leader: n.leader.ID, Nonce: d.Incarnation})
}

// proof is the last proof (a Query naming our incarnation) of one other
// process with our id: its Seq, so that a replay is stale, and when it came.
type proof struct {
	seq uint64
	at  time.Time
}

// maxProofs bounds hearState.proofs: more processes than this with our id
// within one process's life is beyond any misconfiguration it reports.
const maxProofs = 8

// noteProof records p as the last proof of incarnation inc. Every
// incarnation keeps its own, so that replaying the proofs of two processes
// in turn finds each one stale; the longest unheard is forgotten first.
func (n *Node) noteProof(inc uint64, p proof) {
	if n.hear.proofs == nil {
		n.hear.proofs = make(map[uint64]proof)
	}
	if _, ok := n.hear.proofs[inc]; !ok && len(n.hear.proofs) >= maxProofs {
		oldest, found := uint64(0), false
		for i, q := range n.hear.proofs {
			if !found || q.at.Before(n.hear.proofs[oldest].at) {
				oldest, found = i, true
			}
		}
		delete(n.hear.proofs, oldest)
	}
	n.hear.proofs[inc] = p
}

// barred reports whether a process with our id that started first proved
// itself recently, or, in quorum mode, any other did ever (twinned): this
// node must not claim or lead.
func (n *Node) barred(now time.Time) bool {
	if n.twinned() {
		return true
	}
	for inc, p := range n.hear.proofs {
		if inc < n.cfg.Incarnation && now.Sub(p.at) < n.forgetAfter() {
			return true
		}
	}
	return false
}

// presenceIntervals: a follower tells its leader it hears it once per this
// many intervals, so that a leader knows it is heard (isolation,
// leaderGivesWay; in quorum mode ACKs tell it too), and so that it can
// measure the follower's clock (the adapter stamps reports with the
// sender's wall clock, see Message.Sent), at a cost of one small unicast
// per follower per second at the default interval.
const presenceIntervals = 5

// presence sends our leader a FlagReport Query (its evidence says we hear
// it) once per presenceIntervals heartbeats, in reply to its heartbeat m:
// on the heartbeats whose Beat is a multiple of presenceIntervals, so that
// every follower reports on the same one and the leader reads all their
// reports in one wake-up; and on any heartbeat once presenceIntervals+1
// intervals passed without a report (the aligned heartbeat was lost). An
// aligned heartbeat right after a report (its first, or a late one) is
// skipped. It answers the heartbeat at once, so the report's round trip
// is the heartbeat's.
func (n *Node) presence(now time.Time, m *Message) {
	if m.Type != Heartbeat {
		return
	}
	last := n.hear.reportAt
	since := now.Sub(last)
	aligned := m.Beat%presenceIntervals == 0 && since >= 2*n.cfg.Interval
	overdue := since >= (presenceIntervals+1)*n.cfg.Interval
	if !last.IsZero() && !aligned && !overdue {
		return
	}
	n.hear.reportAt = now
	n.emit(n.leader.ID, Message{Type: Query, Flags: FlagReport, Leader: n.leader.ID})
}

// reportRival tells our leader, at most once per interval, that we ignore
// a better rival and still follow it: the message's evidence shows we hear
// it, which is what keeps the leader from stepping down to a rival that
// does not hear the cluster (evidence.go).
func (n *Node) reportRival(now time.Time, m *Message) {
	if !n.hear.rivalReportAt.IsZero() && now.Sub(n.hear.rivalReportAt) < n.cfg.Interval {
		return
	}
	n.hear.rivalReportAt, n.hear.reportAt = now, now
	n.emit(n.leader.ID, Message{Type: Query, Flags: FlagReport, Term: m.Term, Leader: m.From})
}
