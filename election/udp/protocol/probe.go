package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/heartbeat"
)

// A follower that misses a heartbeat probes its leader: it sends PROBE to
// the leader's unicast address, and a live leader answers PROBE_ANSWER
// with the probe's Nonce. Three outcomes:
//
//   - an answer: the leader is alive (its heartbeat was lost or late).
//     The follower stops probing until the next heartbeat is due, and the
//     answer counts as a heartbeat for the detector's deadline;
//   - port unreachable (the caller's ICMP check, LeaderUnreachable): the
//     leader's process is gone while its host stayed up;
//   - silence after k probes spaced probeSpacing apart: the host is most
//     likely gone (or the leader stalled past its fence, which it knows).
//     The verdict comes at the end of the last probe's spacing, never
//     before the leader's fence (fence.go; verdictFloor), and the
//     follower then claims by rank (leaderGone), as for an unreachable
//     port, instead of waiting out Misses × Interval. A leader that says
//     no fence (an older node) is left to the detector.
//
// In quorum mode the voters' promises to the leader still bound failover:
// a verdict, or an unreachable port, makes the follower's ranked claim
// ready the moment they end (leaderGone), instead of a randomized backoff
// after its detector's deadline. A witness never claims and does not
// probe.
//
// k adapts to the loss the detector measures, as its threshold does
// (probeCount): a probe fails if it or its answer is lost, and k is the
// least count whose chance of all failing is under Config.LossTarget, so
// a lossy link gets more probes rather than more claims. A wrong verdict
// costs one futile claim: a live leader answers claims and keeps its
// place, and followers that hear it reject a claimant whose evidence
// misses its heartbeats (evidence.go). In quorum mode it costs not even
// that while the leader's heartbeats come back within the promise: the
// follower follows again before it may claim.
//
// The answer is no lever for an attacker. It is smaller than the probe
// (no Leader, no payload), and a leader answers each sender at most
// maxProbeAnswers times per interval, so it cannot amplify traffic. It
// names the probe's Nonce, which the follower draws from its incarnation
// and increments per probe, and only an answer to a probe still
// outstanding counts: a replayed answer (stale Seq, or an old Nonce)
// cannot keep a dead leader alive. With a key, both are authenticated.

// MinProbes and MaxProbes bound how many unanswered probes make a
// follower conclude that its leader's host is gone (probeCount).
const (
	MinProbes = 3
	MaxProbes = 16
)

// MinProbeSpacing is the least time between two probes of one missed
// heartbeat: a few LAN round trips, and room for a leader's receive path
// that runs a few milliseconds late.
const MinProbeSpacing = 5 * time.Millisecond

// maxProbeAnswers bounds the answers a leader sends one sender per
// interval: a follower sends at most MaxProbes per missed heartbeat.
const maxProbeAnswers = MaxProbes

// probeState is a follower's probing of its leader. A slot is one missed
// heartbeat: slot j starts probeGrace after the j-th heartbeat since the
// last one heard was due.
type probeState struct {
	// last is the detector's Last() the slots count from.
	last time.Time
	slot int
	// sent probes in this slot, the last at sentAt with Nonce nonce.
	sent   int
	sentAt time.Time
	nonce  uint64
	// answered: this slot's probing ended with an answer.
	answered bool
	// heard is the highest Nonce answered: answers at or below it prove
	// nothing new.
	heard uint64
	// alive is when an answer last proved the leader alive.
	alive time.Time
	// rtt is a decaying maximum of the answers' round trips.
	rtt time.Duration
}

// probing reports whether this node probes its leader at all. A witness
// does not: it never claims, so it has nothing to decide.
func (n *Node) probing() bool {
	return !n.quiet && !n.cfg.Witness && n.role == election.Follower && n.fstate == following && n.leader.Addr != ""
}

// verdictFloor returns the earliest time this follower's probes may give
// its leader up, and whether they may at all. Without quorum that is the
// leader's fence (fence.go), and a leader that said none (an older node)
// is left to the detector. In quorum mode the verdict may come as soon as
// the probes are done: the follower's promise to the leader holds its
// claim back until the promise ends (leaderGone).
func (n *Node) verdictFloor() (time.Time, bool) {
	if n.q.on() {
		return time.Time{}, true
	}
	f := n.fenceEnd()
	return f, !f.IsZero()
}

// probeCount is k, the unanswered probes that make the verdict: the least
// count in [MinProbes, MaxProbes] whose chance of all being lost (a probe
// fails if it or its answer is lost, each with the detector's loss
// estimate) is under Config.LossTarget.
func (n *Node) probeCount() int {
	p := n.det.Loss()
	fail := 1 - (1-p)*(1-p)
	target := n.cfg.LossTarget
	if target <= 0 {
		target = defaultLossTarget
	}
	return heartbeat.MissesFor(fail, MinProbes, MaxProbes, target)
}

// probeSpacing is the time between probes: twice the slowest recent
// answer or heartbeat lateness (a leader's receive path that runs late on
// a loaded host), at least MinProbeSpacing, at most an eighth of the
// interval.
func (n *Node) probeSpacing() time.Duration {
	s := 2 * max(n.pr.rtt, n.beatLate)
	return min(max(s, MinProbeSpacing), max(n.cfg.Interval/8, MinProbeSpacing))
}

// slotStart is when probing for missed heartbeat j begins.
func (n *Node) slotStart(j int) time.Time {
	return n.det.Last().Add(time.Duration(j)*n.cfg.Interval + n.probeGrace())
}

// ProbeAt returns when this follower next probes its leader or, after the
// slot's last probe, gives its verdict; the zero time if neither is due
// by the detector's own deadline (or the node does not probe).
func (n *Node) ProbeAt() time.Time {
	if !n.probing() {
		return time.Time{}
	}
	var at time.Time
	verdict := false
	floor, mayConclude := n.verdictFloor()
	switch {
	case !n.det.Last().Equal(n.pr.last):
		at = n.slotStart(1)
	case n.pr.answered || n.pr.sent >= n.probeCount() && !mayConclude:
		at = n.slotStart(n.pr.slot + 1)
	case n.pr.sent >= n.probeCount():
		at, verdict = n.pr.sentAt.Add(n.probeSpacing()), true
		if floor.After(at) {
			at = floor
		}
	default:
		at = n.pr.sentAt.Add(n.probeSpacing())
	}
	if at.Before(n.relistenUntil) {
		at = n.relistenUntil
	}
	if d := n.followDeadline(); at.After(d) || at.Equal(d) && !verdict {
		return time.Time{}
	}
	return at
}

// tickProbe sends the probe due at now, or gives the verdict, reporting
// whether it did either.
func (n *Node) tickProbe(now time.Time) bool {
	at := n.ProbeAt()
	if at.IsZero() || now.Before(at) {
		return false
	}
	_, mayConclude := n.verdictFloor()
	if fresh := !n.det.Last().Equal(n.pr.last); fresh || n.pr.answered || n.pr.sent >= n.probeCount() && !mayConclude {
		// A new slot: the one now has reached (the caller may be late).
		j := max(1, int(now.Sub(n.det.Last())-n.probeGrace())/int(n.cfg.Interval))
		if !fresh {
			j = max(j, n.pr.slot+1)
		}
		n.pr.last, n.pr.slot = n.det.Last(), j
		n.pr.sent, n.pr.answered = 0, false
	}
	if n.pr.sent >= n.probeCount() {
		n.stats.HostGone++
		n.leaderGone(now)
		return true
	}
	if n.pr.nonce < n.cfg.Incarnation {
		// Nonces start at the incarnation: a later process of this node
		// never reuses one, so an answer to a probe of a previous life
		// proves nothing.
		n.pr.nonce, n.pr.heard = n.cfg.Incarnation, n.cfg.Incarnation
	}
	n.pr.nonce++
	n.pr.sent++
	n.pr.sentAt = now
	n.stats.Probes++
	n.emit(n.leader.ID, Message{Type: Probe, Term: n.leader.Term, Leader: n.leader.ID, Nonce: n.pr.nonce})
	return true
}

// stepProbe answers a follower's probe of this leadership, at most
// maxProbeAnswers times per interval per sender.
func (n *Node) stepProbe(now time.Time, m *Message) {
	if n.role != election.Leader || m.Leader != n.cfg.NodeID || m.Term != n.leader.Term {
		n.stats.ProbesNotOurs++
		return
	}
	p := n.peers[m.From] // admit recorded it
	if p == nil || !p.mayAnswerProbe(now, n.cfg.Interval) {
		n.stats.ProbeAnswersLimited++
		return
	}
	n.stats.ProbesAnswered++
	n.emit(m.From, Message{Type: ProbeAnswer, Term: n.leader.Term, Nonce: m.Nonce})
}

// mayAnswerProbe counts one answer to p against its budget of
// maxProbeAnswers per interval, reporting whether it is within it.
func (p *peer) mayAnswerProbe(now time.Time, interval time.Duration) bool {
	if p.probeWindow.IsZero() || now.Sub(p.probeWindow) >= interval || now.Before(p.probeWindow) {
		p.probeWindow, p.probeAnswers = now, 0
	}
	if p.probeAnswers >= maxProbeAnswers {
		return false
	}
	p.probeAnswers++
	return true
}

// stepProbeAnswer takes a leader's answer to one of our outstanding
// probes as proof that it lives.
func (n *Node) stepProbeAnswer(now time.Time, m *Message) {
	if n.role != election.Follower || n.fstate != following || m.From != n.leader.ID || m.Term != n.leader.Term ||
		m.Nonce <= n.pr.heard || m.Nonce > n.pr.nonce {
		n.stats.ProbeAnswersRefused++
		return
	}
	n.stats.ProbeAnswers++
	if m.Nonce == n.pr.nonce {
		n.pr.rtt -= n.pr.rtt / 32
		n.pr.rtt = min(max(n.pr.rtt, now.Sub(n.pr.sentAt)), n.cfg.Interval/8)
	}
	n.pr.heard = m.Nonce
	n.pr.alive = now
	if n.pr.last.Equal(n.det.Last()) {
		n.pr.answered = true
	}
}

// leaderGone makes a follower that knows its leader is gone (its port is
// closed, or it answered no probe past its fence) claim by rank: RankStep
// per known peer that would win a claim against it (rankWait). Every
// follower learns it within a few milliseconds of the others (the same
// missed heartbeat, the same grace), so a random draw would only add
// delay; the best one claims in this very call, and the others yield to
// its claim on hearing it. If they claim first anyway (they do not know
// one another, or the best is dead too), the claim window settles it.
//
// In quorum mode the voters' promises to the dead leader still bound
// failover: the ranked claim is ready the moment they end (promiseEnd),
// not before.
func (n *Node) leaderGone(now time.Time) {
	wait := n.rankWait(n.leader.ID)
	if n.q.on() {
		wait += max(n.promiseEnd().Sub(now), 0)
	}
	n.suspect(now, wait)
	if !n.waitUntil.After(now) {
		n.campaign(now, false)
	}
}

// promiseEnd is when, as far as this follower can tell, the voters'
// promises to its leader end (quorum mode): its own grant in force, and
// at least its promise after the leader's newest heartbeat it heard. The
// voters granted that heartbeat as it arrived, within a delivery of one
// another; this node may not have (it was bound to a claim it voted for),
// and a claim before theirs end would only be refused.
func (n *Node) promiseEnd() time.Time {
	return later(n.q.grantedUntil(), n.det.Last().Add(n.q.promise))
}
