package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// The fence (without quorum). Probes give a silent leader up an interval
// and a few round trips after its last heartbeat (probe.go), and its
// successor leads a claim window later. A leader that was stalled
// meanwhile (its process paused or starved, its host suspended) answered
// none of those probes and, waking, cannot tell whether anyone took over:
// the successor may even be gone by then, and followers ignore an older
// leader's heartbeats without a word. So a leader fences itself, and says
// how on every heartbeat (Message.Fence: Timings.Fence, Interval +
// StallTolerance):
//
//   - it acts (CanActAsLeader) only until Fence after its last heartbeat,
//     and one that wakes later steps down before it sends anything
//     (onPause): leading again takes a new claim;
//   - a follower gives it up — by probes or by its own detector — no
//     sooner than Fence after the last heartbeat it heard from it.
//
// Both sides ask fenceEnd about the same heartbeat and the same Fence: the
// leader counts from sending it, a follower from hearing it, later. A
// follower's own Interval, Misses or probe count do not enter it, so a
// follower configured faster cannot give up a leader that may still act.
// In quorum mode the lease fences instead: heartbeats say no Fence, and
// followers are held back by their promise.

// MinStallTolerance is the least Config.StallTolerance: the time probes
// take to conclude that a leader is gone (MinProbeGrace, then MinProbes
// probes MinProbeSpacing apart) once its heartbeat is overdue.
const MinStallTolerance = MinProbeGrace + MinProbes*MinProbeSpacing

// fenceEnd returns when the leadership this node knows passes its fence:
// Fence after its newest heartbeat, as sent while this node leads and as
// heard while it follows. The zero time when no fence is in force (quorum
// mode, no leader followed, or a leader that said none).
func (n *Node) fenceEnd() time.Time {
	switch {
	case n.role == election.Leader && n.fence > 0:
		return n.lastBeat.Add(n.fence)
	case n.role == election.Follower && n.fstate == following && n.leaderFence > 0:
		return n.det.Last().Add(n.leaderFence)
	}
	return time.Time{}
}

// fencePassed reports whether the leadership this node knows is past its
// fence at now.
func (n *Node) fencePassed(now time.Time) bool {
	end := n.fenceEnd()
	return !end.IsZero() && !now.Before(end)
}

// fenceToSay is the Fence this leader's next heartbeat says: none in
// quorum mode.
func (n *Node) fenceToSay() time.Duration {
	if n.q.on() {
		return 0
	}
	return n.t.Fence
}
