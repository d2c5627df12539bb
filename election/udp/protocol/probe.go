package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/heartbeat"
)

// A follower that misses a heartbeat probes its leader: it sends PROBE to
// the leader's unicast address, and a live leader answers PROBE_ANSWER
// with the probe's Nonce. The outcomes:
//
//   - an answer: the leader is alive (its heartbeat was lost or late).
//     The follower stops probing until the next heartbeat is due, and the
//     answer counts as a heartbeat for the detector's deadline;
//   - port unreachable (the caller's ICMP check, LeaderUnreachable): the
//     leader's process is gone while its host stayed up;
//   - silence: up to k probes per missed heartbeat, probeSpacing apart,
//     and the detector's deadline (Misses × Interval) decides.
//
// k adapts to the loss the detector measures, as its threshold does
// (probeCount): a probe fails if it or its answer is lost, and k is the
// least count whose chance of all failing is under Config.LossTarget.
// Quorum mode does not probe: there the follower's promise to its leader
// holds any claim back until about when it would suspect anyway.
//
// The answer is no lever for an attacker. It is smaller than the probe
// (no Leader, no payload), and a leader answers each sender at most
// maxProbeAnswers times per interval, so it cannot amplify traffic. It
// names the probe's Nonce, which the follower draws from its incarnation
// and increments per probe, and only an answer to a probe still
// outstanding counts: a replayed answer (stale Seq, or an old Nonce)
// cannot keep a dead leader alive. With a key, both are authenticated.

// MinProbes and MaxProbes bound how many probes a follower sends per
// missed heartbeat (probeCount).
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

// probing reports whether this node probes its leader at all.
func (n *Node) probing() bool {
	return !n.quiet && !n.q.on() && n.role == election.Follower && n.fstate == following && n.leader.Addr != ""
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

// ProbeAt returns when this follower next probes its leader; the zero
// time if none is due before the detector's own deadline (or the node
// does not probe).
func (n *Node) ProbeAt() time.Time {
	if !n.probing() {
		return time.Time{}
	}
	var at time.Time
	switch {
	case !n.det.Last().Equal(n.pr.last):
		at = n.slotStart(1)
	case n.pr.answered || n.pr.sent >= n.probeCount():
		at = n.slotStart(n.pr.slot + 1)
	default:
		at = n.pr.sentAt.Add(n.probeSpacing())
	}
	if at.Before(n.relistenUntil) {
		at = n.relistenUntil
	}
	if !at.Before(n.followDeadline()) {
		return time.Time{}
	}
	return at
}

// tickProbe sends the probe due at now, reporting whether it did.
func (n *Node) tickProbe(now time.Time) bool {
	at := n.ProbeAt()
	if at.IsZero() || now.Before(at) {
		return false
	}
	if fresh := !n.det.Last().Equal(n.pr.last); fresh || n.pr.answered || n.pr.sent >= n.probeCount() {
		// A new slot: the one now has reached (the caller may be late).
		j := max(1, int(now.Sub(n.det.Last())-n.probeGrace())/int(n.cfg.Interval))
		if !fresh {
			j = max(j, n.pr.slot+1)
		}
		n.pr.last, n.pr.slot = n.det.Last(), j
		n.pr.sent, n.pr.answered = 0, false
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
// closed, or its host answers no probe) claim by rank: RankStep per known
// peer that would win a claim against it (rankWait). Every follower
// learns it within a few milliseconds of the others (the same missed
// heartbeat, the same grace), so a random draw would only add delay; the
// best one claims in this very call, and the others yield to its claim
// on hearing it. If they claim first anyway (they do not know one
// another, or the best is dead too), the claim window settles it.
func (n *Node) leaderGone(now time.Time) {
	n.suspect(now, n.rankWait(n.leader.ID))
	if !n.waitUntil.After(now) {
		n.campaign(now, false)
	}
}
