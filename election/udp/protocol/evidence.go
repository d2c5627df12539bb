package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// Two-way evidence (docs/protocol.md). Raft's PreVote keeps a node that
// cannot hear the leader from disrupting it: voters that hear a leader
// refuse. Here, without votes, the same role is played by Message.Heard: a
// node gives way to a better leader only if that leader shows it hears the
// live leader this node follows (or is), or this node's leader is no
// longer live for it. A healed partition still resolves at once: the
// better leader, on hearing the worse one's heartbeat, answers with a
// heartbeat whose evidence names it.

// hearsUs reports whether ev shows its sender heard the leader this node
// knows (itself when leading) within the last Misses heartbeats.
func (n *Node) hearsUs(ev Evidence) bool {
	if !n.leader.Known() || ev.Term != n.leader.Term {
		return false
	}
	cur := n.leaderBeat
	if n.role == election.Leader {
		cur = n.beats
	}
	return ev.Beat+uint64(n.cfg.Misses) >= cur
}

// leaderGivesWay decides whether this leader steps down to m, a better
// leader's heartbeat (or preempting claim). Yes if m shows it hears us.
// Otherwise m's sender may be deaf — or we may be mute, our followers gone
// to it. Those followers' silence tells the two apart: a follower that
// still hears us reports the rival it ignores (reportRival), and its
// report carries fresh evidence of us. So we give way at once if no node
// has shown lately that it hears us (followers report presence every few
// intervals), else only once the rival has been heard for a claim window
// with no node showing it hears us.
func (n *Node) leaderGivesWay(now time.Time, m *Message) bool {
	if n.hearsUs(m.Heard) {
		return true
	}
	if n.hear.rivalSince.IsZero() || now.Sub(n.hear.rival.At) > 2*n.cfg.Interval || n.hear.rival.ID != m.From {
		n.hear.rivalSince = now
	}
	n.noteRival(now, m)
	if n.hear.reflected.IsZero() || now.Sub(n.hear.reflected) > (presenceIntervals+1)*n.cfg.Interval {
		// Nobody has shown lately that it hears us (no follower's
		// presence report or ACK): there is no one to keep, give way at
		// once as to any better leader.
		return true
	}
	if now.Sub(n.hear.rivalSince) < n.t.ClaimWindow {
		return false
	}
	return n.hear.reflected.Before(n.hear.rivalSince)
}

// followerGivesWay decides whether a following node switches to m, a
// better leader's heartbeat: only if its own leader is no longer live, or
// m shows it hears that leader.
func (n *Node) followerGivesWay(now time.Time, m *Message) bool {
	if !now.Before(n.followDeadline()) || n.hearsUs(m.Heard) {
		return true
	}
	n.noteRival(now, m)
	n.reportRival(now, m)
	n.reject(now, m)
	return false
}
