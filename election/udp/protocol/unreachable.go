package protocol

import (
	"cmp"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
)

// A follower's probe of its leader (probe.go) goes to the leader's unicast
// address on a connected socket, where the caller can see an ICMP "port
// unreachable" answer (ECONNREFUSED): nothing listens there any more, the
// process died while its host stayed up. The follower then suspects at
// once (LeaderUnreachable). A forged ICMP error costs one futile claim: a
// live leader answers claims and keeps its place.

// ProbeRequest asks the caller to probe a leader's process.
type ProbeRequest struct {
	// Leader and Term identify the leader probed; pass them back to
	// LeaderUnreachable, so a late answer about an old leader is ignored.
	Leader string
	Term   uint64
	// Addr is the leader's address as the transport reported it (the
	// source of its heartbeats).
	Addr string
}

// ProbeGrace returns the most a heartbeat may be late before the follower
// probes: a quarter interval, at most 10 ms. The grace a follower uses
// (probeGrace) is the lateness of its leader's recent heartbeats plus
// MinProbeGrace, within this bound: a live leader's timer and scheduling
// jitter is well under a millisecond on a quiet host and milliseconds on a
// busy one, whatever the interval. A probe of a live leader that was merely
// late costs a datagram and its answer.
func ProbeGrace(interval time.Duration) time.Duration {
	return min(interval/4, maxProbeGrace)
}

// MinProbeGrace is the least grace before a probe, on top of the lateness
// of recent heartbeats.
const MinProbeGrace = time.Millisecond

const maxProbeGrace = 10 * time.Millisecond

// probeGrace is how late the leader's next heartbeat may be before this
// follower probes: beatLate plus MinProbeGrace, at most ProbeGrace.
func (n *Node) probeGrace() time.Duration {
	return min(n.beatLate+MinProbeGrace, ProbeGrace(n.cfg.Interval))
}

// noteBeatGap records the time between two consecutive heartbeats of the
// leader followed. beatLate is a decaying maximum of how much later than an
// interval they came: it rises at once with a late one and loses 1/32 per
// heartbeat (half in 22), so a burst of load raises the grace for a few
// seconds, not for good. It is capped at ProbeGrace, so one long pause is
// forgotten as fast as a merely late heartbeat.
func (n *Node) noteBeatGap(gap time.Duration) {
	n.beatLate -= n.beatLate / 32
	if late := min(gap-n.cfg.Interval, ProbeGrace(n.cfg.Interval)); late > n.beatLate {
		n.beatLate = late
	}
}

// LeaderUnreachable reports that the probe of leader id in term found its
// port closed: the leader's process is gone. A follower of exactly that
// leader suspects it at once and claims by rank (leaderGone). In quorum
// mode (which does not probe) the follower's promise to the dead leader
// holds its claim back anyway, and the usual randomized backoff applies.
// An answer about another leader or term (the follower has moved on
// meanwhile) is counted and ignored.
func (n *Node) LeaderUnreachable(now time.Time, id string, term uint64) {
	now = n.enter(now)
	defer n.leave()
	if n.quiet || n.role != election.Follower || n.fstate != following || n.leader.ID != id || n.leader.Term != term {
		n.stats.ProbeStale++
		return
	}
	n.stats.LeaderUnreachable++
	if n.q.on() {
		n.backOff(now, 0)
		return
	}
	n.leaderGone(now)
}

// suspectSilence gives up on a leader that was silent until the detector's
// deadline. The deadline falls when the k-th missed heartbeat was due, so
// the follower first waits the probe grace for it (a heartbeat that was
// merely late, or lost beside it, cancels the suspicion), then its rank
// (rankWait), at most BackoffMax: followers of one leader reach the
// deadline together, from the same last heartbeat, unless loss gave them
// different thresholds, and then the earliest claims alone anyway. In
// quorum mode the randomized backoff applies: simultaneous claims would
// split the votes.
func (n *Node) suspectSilence(now time.Time) {
	if n.q.on() {
		n.backOff(now, 0)
		return
	}
	n.suspect(now, min(n.probeGrace()+n.rankWait(n.leader.ID), n.t.BackoffMax))
}

// rankWait is how long a follower that knows its leader's process is gone
// waits before claiming: RankStep for every peer it knows (heard since it
// started — a replay-table entry resumed from the state file does not
// count —, not resigned, not the dead leader) whose claim would beat its
// own in the same round — higher priority, then higher NodeTag, then
// higher id, the order of terms and of better — at most BackoffMax.
// Followers do not hear one another in steady state, so a peer that died
// unannounced still counts: it costs RankStep, not a failed election.
func (n *Node) rankWait(dead string) time.Duration {
	rank := 0
	for id, p := range n.peers {
		if p.gone || p.resumed || p.witness || id == dead {
			continue
		}
		if claimsAhead(p.priority, NodeTag(id), id, n.cfg.Priority, n.tag, n.cfg.NodeID) {
			rank++
		}
	}
	return min(time.Duration(rank)*n.t.RankStep, n.t.BackoffMax)
}

// claimsAhead reports whether a node's claim beats b's in the same round.
func claimsAhead(aPrio uint8, aTag uint16, aID string, bPrio uint8, bTag uint16, bID string) bool {
	return cmp.Or(cmp.Compare(aPrio, bPrio), cmp.Compare(aTag, bTag), strings.Compare(aID, bID)) > 0
}
