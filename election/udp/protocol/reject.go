package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// Rejections (without quorum). A node that stops hearing the leader while
// the others still hear it — one-way loss from the leader, a firewall that
// drops that leader's packets — claims, and its claim shows old evidence.
// The followers ignore such a claim (evidence.go), but the claimant hears
// no objection and would lead beside the live leader, running every job a
// second time. So a follower that ignores a claim or a better leader for
// lack of evidence tells the sender so (FlagRejected, carrying fresh
// evidence of the live leader), and the sender stands down. In a genuine
// failover no follower hears newer heartbeats than the claimant, so no
// rejection is sent and nothing slows down. Quorum mode needs none of
// this: a follower that hears a live leader does not vote.

// reject tells m's sender, a claimant or a better leader this follower
// ignores, that it follows a live leader the sender shows no sign of
// hearing. At most one per quarter claim window, so a flood of claims
// cannot make it flood; claims come a claim window apart, rivals'
// heartbeats an interval apart. The limit is shared by all senders: it
// reports whether a rejection went out now or within that quarter window,
// to this sender or another (a claimant's resend, half a window later,
// gets its own).
func (n *Node) reject(now time.Time, m *Message) bool {
	if n.q.on() || !n.leaderLive(now) || n.hearsUs(m.Heard) {
		return false
	}
	if !n.hear.rejectAt.IsZero() && now.Sub(n.hear.rejectAt) < n.t.ClaimWindow/4 {
		return true
	}
	n.hear.rejectAt = now
	n.stats.RejectionsSent++
	n.emit(m.From, Message{Type: Query, Flags: FlagRejected, Term: n.leader.Term, Leader: n.leader.ID})
	return true
}

// stepRejected handles a follower's word that it follows a live leader
// this node shows no sign of hearing. A candidate gives its claim up; a
// leader that no node has shown lately it hears steps down (one whose own
// followers report hearing it keeps leading: that is a healed partition,
// settled between the leaders by evidence), and only if it still does not
// hear the named leader an interval later. Each rejection in a row
// doubles the wait before the next claim, up to 16 intervals.
func (n *Node) stepRejected(now time.Time, m *Message) {
	if n.q.on() || m.Heard.Term != m.Term || m.Heard.Beat == 0 || m.Leader == n.cfg.NodeID {
		return
	}
	if n.heard.Term == m.Heard.Term && n.heard.Beat+uint64(n.cfg.Misses) >= m.Heard.Beat {
		return // we hear that leader as well as the sender does
	}
	switch n.role {
	case election.Candidate:
	case election.Leader:
		if !n.hear.reflected.IsZero() && now.Sub(n.hear.reflected) <= (presenceIntervals+1)*n.cfg.Interval {
			return
		}
		// A leader of a healed partition is rejected by the other side's
		// followers before it has heard that side's leader; within an
		// interval it hears it, its evidence shows it, and the check above
		// returns (the other leader gives way to it instead). Step down
		// only on a rejection an interval after the first.
		if n.hear.rejectedSince.IsZero() || now.Sub(n.hear.rejectedSince) > 3*n.cfg.Interval {
			n.hear.rejectedSince = now
			return
		}
		if now.Sub(n.hear.rejectedSince) < n.cfg.Interval {
			return
		}
	default:
		return
	}
	n.hear.rejectedSince = time.Time{}
	n.stats.Rejected++
	n.hear.rejections++
	n.wait(now, n.cfg.Interval<<min(n.hear.rejections, 4))
}

// heardStale records, as this node's evidence, the heartbeat of a leader
// it ignores as stale while it follows no live leader. Its claim then shows
// that it hears that leader: the leader's followers let it through instead
// of rejecting it (it would otherwise wait forever for a leader it will not
// follow), and once it leads, that leader gives way to it (evidence.go).
// Terms keep growing.
func (n *Node) heardStale(m *Message) {
	if m.Type == Heartbeat {
		n.heard = Evidence{Term: m.Term, Beat: m.Beat}
	}
}
