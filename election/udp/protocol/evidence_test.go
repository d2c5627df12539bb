package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// followerOfL returns a follower "me" that heard leader l's heartbeats 1..3,
// an interval apart, the last at the returned time.
func followerOfL(t *testing.T) (*Node, time.Time) {
	t.Helper()
	f := newTestNode(t)
	now := t0
	for seq := uint64(1); seq <= 3; seq++ {
		now = now.Add(f.cfg.Interval)
		f.Step(now, beat("l", 7, seq, 1))
	}
	require.Equal(t, "l", f.Status().Leader.ID)
	f.Ready()
	return f, now
}

func rejections(es []Envelope) []Envelope {
	var rs []Envelope
	for _, e := range es {
		if e.Msg.Type == Query && e.Msg.Flags&FlagRejected != 0 {
			rs = append(rs, e)
		}
	}
	return rs
}

// A claim whose evidence misses a heartbeat of the live leader that the
// follower heard a Reach or more before is rejected, although it is
// within Misses heartbeats: its sender had time to hear it and did not
// (a deaf node whose probes gave the leader up). One in flight when the
// heartbeat came is not; nor is one naming it.
func TestClaimMissingAHeardBeatIsRejected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		beat   uint64
		after  func(Timings) time.Duration
		reject bool
	}{
		{"misses one heard a Reach ago", 2, func(t Timings) time.Duration { return t.Reach }, true},
		{"misses one heard just now", 2, func(t Timings) time.Duration { return t.Reach - time.Millisecond }, false},
		{"names the newest", 3, func(t Timings) time.Duration { return 2 * t.Reach }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, now := followerOfL(t)
			term := MakeTerm(1, 100, NodeTag("l"))
			c := claim("c", 100, 2, 1)
			c.Heard = Evidence{Term: term, Beat: tc.beat}
			f.Step(now.Add(tc.after(f.t)), c)
			rs := rejections(f.Ready())
			if !tc.reject {
				assert.Empty(t, rs)
				return
			}
			require.Len(t, rs, 1)
			assert.Equal(t, "c", rs[0].To)
			assert.Equal(t, Evidence{Term: term, Beat: 3}, rs[0].Msg.Heard, "naming the heartbeat it missed")
		})
	}
}

// A follower does not switch to a better leader whose evidence misses a
// heartbeat of its own leader that it heard a Reach before; it does when
// the evidence names it (a healed partition: the better leader answers the
// heartbeat it just heard).
func TestFollowerIgnoresRivalMissingAHeardBeat(t *testing.T) {
	for _, tc := range []struct {
		beat    uint64
		follows string
	}{{2, "l"}, {3, "r"}} {
		f, now := followerOfL(t)
		r := beat("r", 9, 1, 5)
		r.Heard = Evidence{Term: MakeTerm(1, 100, NodeTag("l")), Beat: tc.beat}
		f.Step(now.Add(2*f.t.Reach), r)
		assert.Equal(t, tc.follows, f.Status().Leader.ID, "evidence of beat %d", tc.beat)
	}
}

// heardLeader returns a leader l that a follower showed lately it hears,
// just after l sent a heartbeat the follower has not reported yet.
func heardLeader(t *testing.T) (l *Node, now time.Time, term uint64) {
	t.Helper()
	l, now = alone(t, "l", 100, 1)
	term = l.Status().Leader.Term
	l.Step(now, Message{Type: Query, Cluster: "test", From: "f", Incarnation: 3, Seq: 1, Flags: FlagReport,
		Leader: "l", Heard: Evidence{Term: term, Beat: l.beats}})
	now = l.NextTick()
	l.Tick(now)
	l.Ready()
	return l, now, term
}

// A leader whose followers showed lately that they hear it does not give
// way at once to a better leader whose evidence misses its newest
// heartbeat, sent a Reach or more before: that leader may be a node that
// cannot hear it. The rival's own message is no sign that anyone hears
// this leader; so if no follower shows it within a claim window (a mute
// leader, whose followers chose the rival), it gives way on the rival's
// next heartbeat.
func TestLeaderHoldsAgainstRivalMissingItsBeat(t *testing.T) {
	l, now, term := heardLeader(t)
	r := beat("r", 9, 1, 5)
	r.Heard = Evidence{Term: term, Beat: l.beats - 1}
	now = now.Add(2 * l.t.Reach)
	l.Step(now, r)
	require.Equal(t, election.Leader, l.Status().Role, "holds: a follower heard it lately, the rival misses its beat")
	r.Seq, r.Beat = 2, 2
	l.Step(now.Add(l.t.ClaimWindow), r)
	assert.Equal(t, election.Follower, l.Status().Role, "no follower showed it hears l since the rival came")
	assert.Equal(t, "r", l.Status().Leader.ID)
}

// A better leader whose evidence names the leader's newest heartbeat hears
// it: the leader gives way at once.
func TestLeaderGivesWayToRivalThatHearsIt(t *testing.T) {
	l, now, term := heardLeader(t)
	r := beat("r", 9, 1, 5)
	r.Heard = Evidence{Term: term, Beat: l.beats}
	l.Step(now.Add(2*l.t.Reach), r)
	assert.Equal(t, "r", l.Status().Leader.ID)
}
