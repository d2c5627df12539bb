package protocol

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probePair returns a leader l and a follower f of it that has just heard
// l's heartbeat at now, and the probe f sends when the next one is late.
func probePair(t *testing.T, leaderID string) (l, f *Node, probe Message, now time.Time) {
	t.Helper()
	l, now = alone(t, leaderID, 100, 1)
	f, err := NewNode(testConfig("f", 50, 2), now)
	require.NoError(t, err)
	f.Ready()
	l.Tick(l.NextTick())
	for _, e := range l.Ready() {
		if e.Msg.Type == Heartbeat {
			e.Msg.Addr = "addr-l"
			now = l.now
			f.Step(now, e.Msg)
		}
	}
	require.Equal(t, leaderID, f.Status().Leader.ID)
	f.Ready()
	at := f.NextTick()
	require.Equal(t, now.Add(f.cfg.Interval+MinProbeGrace), at, "the probe goes out when the next heartbeat is late")
	f.Tick(at)
	out := f.Ready()
	require.Len(t, out, 1)
	require.Equal(t, Probe, out[0].Msg.Type)
	require.Equal(t, leaderID, out[0].To)
	probe = out[0].Msg
	probe.Addr = "addr-f"
	return l, f, probe, at
}

// probeAnswers steps m into l at now and returns l's probe answers.
func probeAnswers(l *Node, now time.Time, m Message) []Message {
	l.Step(now, m)
	var as []Message
	for _, e := range l.Ready() {
		if e.Msg.Type == ProbeAnswer {
			as = append(as, e.Msg)
		}
	}
	return as
}

// A live leader answers a follower's probe with its nonce, and the answer
// is proof of life: the follower's deadline counts from it.
func TestProbeAnswerProvesLife(t *testing.T) {
	l, f, probe, now := probePair(t, "l")
	as := probeAnswers(l, now, probe)
	require.Len(t, as, 1)
	a := as[0]
	assert.Equal(t, probe.Nonce, a.Nonce)
	assert.Equal(t, l.Status().Leader.Term, a.Term)
	assert.Empty(t, a.Leader)
	assert.Empty(t, a.Payload)
	a.Addr = "addr-l"
	before := f.followDeadline()
	later := now.Add(time.Millisecond)
	f.Step(later, a)
	assert.Equal(t, uint64(1), f.Stats().ProbeAnswers)
	assert.Equal(t, later.Add(f.det.Timeout()), f.followDeadline(), "deadline counts from the answer")
	assert.True(t, f.followDeadline().After(before))
	// No more probes until the heartbeat after next is late.
	assert.Equal(t, f.det.Last().Add(2*f.cfg.Interval+f.probeGrace()), f.ProbeAt())
}

// A replayed answer cannot keep a dead leader alive: the same packet is
// stale by its Seq, and an answer naming a probe no longer outstanding
// (an old nonce, or one of a previous life of the follower) is refused.
func TestProbeAnswerReplayRefused(t *testing.T) {
	l, f, probe, now := probePair(t, "l")
	a := probeAnswers(l, now, probe)[0]
	a.Addr = "addr-l"
	f.Step(now, a)
	require.Equal(t, uint64(1), f.Stats().ProbeAnswers)
	deadline := f.followDeadline()

	f.Step(now.Add(time.Millisecond), a)
	assert.Equal(t, DropStaleSeq, f.LastDrop(), "the same packet again")

	// The leader dies. The old answer, re-sent with a fresh Seq (a replay
	// table that forgot it), names a nonce already answered.
	old := a
	old.Seq += 100
	f.Step(now.Add(2*time.Millisecond), old)
	assert.Equal(t, uint64(1), f.Stats().ProbeAnswersRefused)
	assert.Equal(t, deadline, f.followDeadline(), "no new proof of life")

	// A restarted follower (a later incarnation) starts its nonces above
	// every one it sent before: the old answer proves nothing to it.
	c := testConfig("f", 50, 2)
	c.Incarnation = f.cfg.Incarnation + 1<<16
	f2, err := NewNode(c, now)
	require.NoError(t, err)
	hb := beat("l", l.cfg.Incarnation, 1, TermRound(l.Status().Leader.Term))
	hb.Term, hb.Seq, hb.Beat, hb.Addr = l.Status().Leader.Term, a.Seq-1, l.beats, "addr-l"
	f2.Step(now, hb)
	require.Equal(t, "l", f2.Status().Leader.ID)
	f2.Tick(f2.NextTick()) // its own probe, nonce above its incarnation
	replay := a
	replay.Seq += 200
	f2.Step(f2.now, replay)
	assert.Equal(t, uint64(1), f2.Stats().ProbeAnswersRefused)
	assert.Zero(t, f2.Stats().ProbeAnswers)
}

// A leader answers each sender at most maxProbeAnswers times per interval,
// answers no probe of another leadership, and an answer is never larger
// than the probe (wire sizes: wire.TestProbeAnswerNoLargerThanProbe).
func TestProbeAnswersRateLimited(t *testing.T) {
	l, _, probe, now := probePair(t, "l")
	sent := 0
	for i := range 3 * maxProbeAnswers {
		m := probe
		m.Seq += uint64(i)
		sent += len(probeAnswers(l, now.Add(time.Duration(i)*time.Microsecond), m))
	}
	assert.Equal(t, maxProbeAnswers, sent, "one sender, one interval")
	assert.Equal(t, uint64(2*maxProbeAnswers), l.Stats().ProbeAnswersLimited)
	m := probe
	m.Seq += 1000
	assert.Len(t, probeAnswers(l, now.Add(l.cfg.Interval), m), 1, "the next interval has a fresh budget")

	other := probe
	other.Seq += 2000
	other.Term = MakeTerm(9, 100, NodeTag("l"))
	assert.Empty(t, probeAnswers(l, now.Add(l.cfg.Interval), other), "a probe of another term")
	assert.Equal(t, uint64(1), l.Stats().ProbesNotOurs)
}

// A follower that is not following (or a non-leader) answers nothing, and
// malformed probes and answers are dropped.
func TestProbeMalformed(t *testing.T) {
	n := newTestNode(t)
	term := MakeTerm(1, 100, NodeTag("p"))
	for _, m := range []Message{
		{Type: Probe, Cluster: "test", From: "p", Incarnation: 1, Seq: 1, Term: term, Nonce: 1},
		{Type: Probe, Cluster: "test", From: "p", Incarnation: 1, Seq: 2, Term: term, Leader: "me"},
		{Type: ProbeAnswer, Cluster: "test", From: "p", Incarnation: 1, Seq: 3, Term: term, Nonce: 1, Leader: "p"},
		{Type: ProbeAnswer, Cluster: "test", From: "p", Incarnation: 1, Seq: 4, Term: term, Nonce: 1, Payload: []byte("x")},
		{Type: ProbeAnswer, Cluster: "test", From: "p", Incarnation: 1, Seq: 5, Term: term},
	} {
		n.Step(t0, m)
		assert.Equal(t, DropMalformed, n.LastDrop(), "%+v", m)
	}
	n.Step(t0, Message{Type: Probe, Cluster: "test", From: "p", Incarnation: 1, Seq: 6, Term: term, Leader: "me", Nonce: 1})
	assert.Empty(t, n.Ready(), "not leading: no answer")
	assert.Equal(t, election.Follower, n.Status().Role)
}

// k, the probes per missed heartbeat, grows with measured loss as the
// detector's threshold does.
func TestProbeCountAdaptsToLoss(t *testing.T) {
	n := newTestNode(t)
	assert.Equal(t, MinProbes, n.probeCount(), "no loss")
	for seq := uint64(1); seq < 2000; seq += 5 { // one in five lost
		n.det.Observe(t0, seq)
	}
	k := n.probeCount()
	assert.Greater(t, k, MinProbes)
	assert.LessOrEqual(t, k, MaxProbes)
}
