package election

import "time"

// Succession is what an election mode promises about a leader that lost
// its leadership: whether, and how soon after its successor's leadership
// starts, it has stopped acting as leader. Work it started as leader (a
// job run, a leader-only service) is stopped when it stops acting and is
// gone within the work's own stop time after that (SIGTERM, then SIGKILL
// after a grace). A successor that must never run its copy of the work
// beside the old one waits until QuietAt, unless it learns sooner that the
// old copy ended (its outcome, or its node saying it no longer runs it).
//
// The zero Succession bounds nothing.
type Succession struct {
	// Bounded is false when nothing bounds when a deposed leader stops
	// acting: modes that coordinate nothing between nodes (static, env,
	// udp without quorum) let a leader cut off from the others go on
	// leading on its side for as long as it is cut off.
	Bounded bool
	// Overhang is how long after its successor's leadership starts a
	// deposed leader may still act as leader: zero when it stops before a
	// successor can be elected (udp quorum mode: its lease ends before a
	// majority may grant another); in etcd mode the session TTL (a leader
	// key deleted or a lease revoked by hand elects a successor at once,
	// while the old leader may act until its last renewal runs out).
	Overhang time.Duration
}

// QuietAt returns when work a deposed leader started can no longer be
// going, for a successor whose leadership started at since and work that
// is gone within stop after its leader stops acting. ok is false when the
// mode bounds nothing.
//
// stop is timed by the deposed leader's host (its kill grace, its shim's
// licence), whose clock may run slower than this node's: it counts
// OtherClock(stop) here. The overhang is the mode's own and carries its
// margin already (etcd's lease margin).
func (s Succession) QuietAt(since time.Time, stop time.Duration) (quiet time.Time, ok bool) {
	if !s.Bounded {
		return time.Time{}, false
	}
	return since.Add(s.Overhang + OtherClock(stop)), true
}

// OtherClock returns a duration d timed by another host's clock as this
// host must count it to be sure it is over there: a fifth longer, for
// clock rates within 20 % of each other, the bound the protocol documents
// (its quorum lease keeps the same margin).
func OtherClock(d time.Duration) time.Duration { return d * 6 / 5 }

// String describes the promise for start-up logs.
func (s Succession) String() string {
	switch {
	case !s.Bounded:
		return "none: a deposed leader cut off from the others may go on acting"
	case s.Overhang == 0:
		return "a deposed leader stops acting before its successor starts"
	default:
		return "a deposed leader stops acting within " + s.Overhang.String() + " of its successor's start"
	}
}
