package protocol

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// alone returns a node that has elected itself with nobody around, and the
// time it did.
func alone(t *testing.T, id string, prio uint8, seed uint64) (*Node, time.Time) {
	t.Helper()
	n, err := NewNode(testConfig(id, prio, seed), t0)
	require.NoError(t, err)
	now := t0
	for range 10 {
		now = n.NextTick()
		n.Tick(now)
		if n.Status().Role == election.Leader {
			n.Ready()
			return n, now
		}
	}
	t.Fatalf("%s did not elect itself", id)
	return nil, now
}

func claim(from string, prio uint8, round uint64, seq uint64) Message {
	return Message{Type: Claim, Cluster: "test", From: from, Incarnation: 1, Seq: seq, Priority: prio,
		Term: MakeTerm(round, prio, NodeTag(from))}
}

func types(es []Envelope) []Type {
	var ts []Type
	for _, e := range es {
		ts = append(ts, e.Msg.Type)
	}
	return ts
}

func TestLeaderAnswersClaimAtOnceAndClaimantYields(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	c, err := NewNode(testConfig("c", 100, 2), now)
	require.NoError(t, err)
	c.Ready()
	// c never heard l: it suspects and claims.
	for c.Status().Role != election.Candidate {
		c.Tick(c.NextTick())
	}
	out := c.Ready()
	require.Equal(t, []Type{Claim}, types(out))
	at := c.NextTick().Add(-time.Millisecond)
	for !l.NextTick().After(at) { // keep the leader on schedule (no pause)
		l.Tick(l.NextTick())
	}
	l.Ready()
	l.Step(at, out[0].Msg)
	ans := l.Ready()
	require.Equal(t, []Type{Heartbeat}, types(ans), "a live leader answers a claim at once")
	c.Step(at, ans[0].Msg)
	assert.Equal(t, election.Follower, c.Status().Role, "the claimant yields to the live leader")
	assert.Equal(t, "l", c.Status().Leader.ID)
	assert.Equal(t, election.Leader, l.Status().Role)
}

func TestCandidateYieldsOnlyToBetterClaim(t *testing.T) {
	tests := []struct {
		name  string
		prio  uint8
		round uint64
		yield bool
	}{
		{"higher round", 1, 5, true},
		{"same round higher priority", 200, 1, true},
		{"same round lower priority", 50, 1, false},
		{"lower round", 255, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewNode(testConfig("c", 100, 2), t0)
			require.NoError(t, err)
			for c.Status().Role != election.Candidate {
				c.Tick(c.NextTick())
			}
			require.Equal(t, uint64(1), TermRound(c.claimTerm))
			m := claim("x", tc.prio, tc.round, 1)
			if tc.round == 0 {
				m.Term = MakeTerm(1, 0, 0) // same round, worst possible
				m.Priority = 0
			}
			c.Step(c.now, m)
			if tc.yield {
				assert.Equal(t, election.Follower, c.Status().Role)
			} else {
				assert.Equal(t, election.Candidate, c.Status().Role)
			}
		})
	}
}

func TestFollowerWithFreshLeaderIgnoresClaim(t *testing.T) {
	n := newTestNode(t)
	n.Step(t0, beat("l", 1, 1, 1))
	n.Step(t0.Add(100*time.Millisecond), claim("x", 255, 9, 1))
	assert.Equal(t, "l", n.Status().Leader.ID)
	assert.Equal(t, uint64(9), n.round, "the round is still remembered, so later terms are above it")
	n.Tick(n.NextTick())
	assert.NotEqual(t, election.Leader, n.Status().Role)
}

func TestTwoLeadersWorseStepsDownAtOnce(t *testing.T) {
	a, now := alone(t, "a", 100, 1)
	b, _ := alone(t, "b", 100, 2)
	// Make b's term newer: it saw a higher round before claiming.
	b.Step(now, claim("z", 1, 7, 1))
	b.Resign(now) // b is gone; build a fresh b leading round 8
	b2, err := NewNode(testConfig("b", 100, 3), now)
	require.NoError(t, err)
	b2.Step(now, claim("z", 1, 7, 1))
	for b2.Status().Role != election.Leader {
		b2.Tick(b2.NextTick())
	}
	hb := b2.Ready()
	hb = hb[len(hb)-1:]
	require.Equal(t, Heartbeat, hb[0].Msg.Type)

	// a hears the better b, which shows no sign of hearing a: a stays
	// and answers at once; b hears that answer and answers with evidence
	// of a; a then steps down and follows b — within a few round trips.
	now = now.Add(a.cfg.ClaimWindow)
	// a has a follower that says it hears a (its presence report).
	a.Step(now, Message{Type: Query, Cluster: "test", From: "f", Incarnation: 1, Seq: 1, Flags: FlagReport,
		Leader: "a", Heard: Evidence{Term: a.Status().Leader.Term, Beat: 1}})
	a.Step(now, hb[0].Msg)
	assert.Equal(t, election.Leader, a.Status().Role, "b does not show it hears a yet")
	ans := a.Ready()
	require.Equal(t, []Type{Heartbeat}, types(ans))
	b2.Step(b2.now.Add(b2.cfg.ClaimWindow), ans[0].Msg)
	reply := b2.Ready()
	require.Equal(t, []Type{Heartbeat}, types(reply))
	assert.Equal(t, Evidence{Term: a.Status().Leader.Term, Beat: ans[0].Msg.Beat}, reply[0].Msg.Heard)
	a.Step(now, reply[0].Msg)
	assert.Equal(t, election.Follower, a.Status().Role)
	assert.Equal(t, "b", a.Status().Leader.ID)
	assert.Equal(t, uint64(1), a.Stats().SteppedDown)

	// b2 hears a worse leader's heartbeat: answers at once, stays.
	c, _ := alone(t, "c", 100, 4)
	c.SetPayload([]byte("x"))
	c.Tick(c.NextTick())
	worse := c.Ready()
	require.NotEmpty(t, worse)
	b2.Step(b2.now.Add(2*b2.cfg.ClaimWindow), worse[0].Msg)
	assert.Equal(t, election.Leader, b2.Status().Role)
	assert.Equal(t, []Type{Heartbeat}, types(b2.Ready()))
}

func TestResignNamesBestPeerWhoClaimsAtOnce(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	// l knows three peers from their start-up queries.
	for i, p := range []struct {
		id   string
		prio uint8
	}{{"p1", 50}, {"p2", 200}, {"p3", 150}} {
		l.Step(now, Message{Type: Query, Cluster: "test", From: p.id, Incarnation: 1, Seq: 1, Priority: p.prio})
		_ = i
	}
	l.Ready()
	l.Resign(now)
	out := l.Ready()
	require.Len(t, out, 1)
	assert.Equal(t, Resign, out[0].Msg.Type)
	assert.Equal(t, "p2", out[0].Msg.Successor)
	assert.Equal(t, election.Follower, l.Status().Role)

	// The successor claims at once; another follower backs off W first.
	for _, tc := range []struct {
		id       string
		claimNow bool
	}{{"p2", true}, {"p3", false}} {
		f, err := NewNode(testConfig(tc.id, 100, 9), now)
		require.NoError(t, err)
		hb := Message{Type: Heartbeat, Cluster: "test", From: "l", Leader: "l", Incarnation: l.cfg.Incarnation, Seq: 1, Beat: 1, Term: l.Status().Leader.Term, Priority: 100}
		f.Step(now, hb)
		f.Ready()
		f.Step(now, out[0].Msg)
		if tc.claimNow {
			assert.Equal(t, election.Candidate, f.Status().Role)
			assert.Equal(t, []Type{Claim}, types(f.Ready()))
		} else {
			assert.Equal(t, election.Follower, f.Status().Role)
			assert.False(t, f.NextTick().Before(now.Add(f.cfg.ClaimWindow)), "lets the successor go first")
		}
	}
}

func TestFollowerIgnoresStaleLeader(t *testing.T) {
	n := newTestNode(t)
	n.Step(t0, beat("new", 1, 1, 5))
	n.Step(t0, beat("old", 1, 1, 3))
	assert.Equal(t, "new", n.Status().Leader.ID)
	assert.Equal(t, uint64(1), n.Stats().StaleLeaderIgnored)
	// Even after the new leader is suspected, the stale one is not followed.
	n.Tick(n.NextTick())
	n.Step(n.now, beat("old", 1, 2, 3))
	assert.NotEqual(t, "old", n.Status().Leader.ID)
}

func TestPreemptClaimDeposesLeader(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	m := claim("p", 200, TermRound(l.Status().Leader.Term)+1, 1)
	m.Flags = FlagPreempt
	m.Heard = Evidence{Term: l.Status().Leader.Term, Beat: 1}
	l.Step(now, m)
	assert.Equal(t, election.Follower, l.Status().Role)
	assert.Empty(t, l.Ready(), "no answering heartbeat to a legitimate preemption")

	l2, now := alone(t, "l", 100, 1)
	m.Priority = 50 // a lower-priority node cannot preempt
	m.Term = MakeTerm(TermRound(l2.Status().Leader.Term)+1, 50, NodeTag("p"))
	l2.Step(now, m)
	assert.Equal(t, election.Leader, l2.Status().Role)
}

func TestAnswerBeatRateLimited(t *testing.T) {
	l, now := alone(t, "l", 100, 1)
	for i := range 10 {
		l.Step(now.Add(l.cfg.ClaimWindow+time.Microsecond), claim("x", 1, 9, uint64(i+1)))
	}
	assert.Len(t, l.Ready(), 1, "a flood of claims gets one answer per W/4")
}

func TestStaleClaimIsCorrectedAndClaimantGivesUp(t *testing.T) {
	f := newTestNode(t)
	f.Step(t0, beat("l", 1, 1, 5)) // f knows a leader of round 5
	c, err := NewNode(testConfig("c", 100, 2), t0)
	require.NoError(t, err)
	for c.Status().Role != election.Candidate { // c restarted, knows nothing
		c.Tick(c.NextTick())
	}
	cl := c.Ready()
	require.Equal(t, []Type{Query, Claim}, types(cl), "start-up query, then the claim")
	cl = cl[1:]
	require.Equal(t, uint64(1), TermRound(cl[0].Msg.Term))

	f.Step(t0.Add(10*time.Millisecond), cl[0].Msg)
	corr := f.Ready()
	require.Len(t, corr, 1, "a follower that knows a newer leader tells the stale claimant")
	assert.Equal(t, Query, corr[0].Msg.Type)
	assert.Equal(t, "c", corr[0].To)
	assert.Equal(t, MakeTerm(5, 100, NodeTag("l")), corr[0].Msg.Term)
	assert.Equal(t, "l", f.Status().Leader.ID, "and keeps its leader")

	c.Step(c.now, corr[0].Msg)
	assert.Equal(t, election.Follower, c.Status().Role, "the claimant gives up")
	for c.Status().Role != election.Candidate {
		c.Tick(c.NextTick())
	}
	cl = c.Ready()
	require.NotEmpty(t, cl)
	assert.Greater(t, cl[len(cl)-1].Msg.Term, corr[0].Msg.Term, "its next claim is above the corrected term")
}
