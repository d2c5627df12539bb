package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
)

// witnessNet is two nodes, a and b, and a witness w of highest priority,
// in a 3-voter quorum cluster, elected; tune, if given, adjusts every
// node's config.
func witnessNet(t *testing.T, tune ...func(*Config)) *net {
	t.Helper()
	nw := &net{nodes: map[string]*Node{}, down: map[string]bool{}, now: t0}
	for i, id := range []string{"a", "b", "w"} {
		c := testConfig(id, 100, uint64(i+1))
		c.ClusterSize = 3
		for _, f := range tune {
			f(&c)
		}
		if id == "w" {
			c.Witness, c.Priority = true, 255 // it would win every claim
		}
		n, err := NewNode(c, t0)
		require.NoError(t, err)
		nw.nodes[id] = n
	}
	nw.pump()
	nw.run(5 * time.Second)
	require.Len(t, nw.leaders(), 1)
	return nw
}

func TestWitnessConfigNeedsQuorum(t *testing.T) {
	c := testConfig("w", 100, 1)
	c.Witness = true
	assert.ErrorContains(t, c.Validate(), "Witness needs ClusterSize")
	c.ClusterSize = 3
	assert.NoError(t, c.Validate())
}

// TestWitnessVotesAndAcksButNeverLeads: a witness takes part in every
// majority — a leader keeps its lease with the witness alone when the
// other node is down — and never leads: not at start (its priority would
// win), not when the leader dies (it keeps waiting; the survivor leads on
// its vote), not when named nowhere.
func TestWitnessVotesAndAcksButNeverLeads(t *testing.T) {
	nw := witnessNet(t)
	w := nw.nodes["w"]
	assert.NotEqual(t, "w", nw.leaders()[0])
	assert.Zero(t, w.Stats().Elections, "a witness never claims")
	assert.Equal(t, election.Follower, w.Status().Role)

	first := nw.leaders()[0]
	other := map[string]string{"a": "b", "b": "a"}[first]
	nw.down[other] = true
	nw.run(10 * time.Second)
	assert.Equal(t, []string{first}, nw.leaders(), "the witness's acks keep the lease of the leader alone")
	assert.True(t, nw.nodes[first].CanActAsLeader(nw.now))

	nw.down[other] = false
	nw.down[first] = true
	nw.run(10 * time.Second)
	assert.Equal(t, []string{other}, nw.leaders(), "the survivor leads on the witness's vote")
	assert.Zero(t, w.Stats().Elections)
	assert.Positive(t, w.Stats().VotesGranted)

	nw.down[other] = true // both servers gone: nobody leads, the witness least
	nw.run(30 * time.Second)
	assert.Empty(t, nw.leaders())
	assert.Zero(t, w.Stats().Elections)
	assert.Equal(t, election.Follower, w.Status().Role)
}

// TestWitnessIsNeverNamedSuccessor: a resigning leader hands over to a
// node that will claim, never to a witness, whatever its priority.
func TestWitnessIsNeverNamedSuccessor(t *testing.T) {
	nw := witnessNet(t)
	l := nw.nodes[nw.leaders()[0]]
	assert.NotEqual(t, "w", l.successor())
	assert.NotEmpty(t, l.successor())
	q := l.Quorum()
	assert.Equal(t, []string{"w"}, q.Witnesses)
	assert.Equal(t, []string{"w"}, nw.nodes["w"].Quorum().Witnesses, "a witness counts itself")
	for _, p := range l.Peers(nw.now) {
		assert.Equal(t, p.ID == "w", p.Witness, "peer %s", p.ID)
	}
}

// TestWitnessAnswersWhoWithItsLeader: `lanleader who` learns of a witness
// and the leader it follows; a follower that is no witness says nothing.
func TestWitnessAnswersWhoWithItsLeader(t *testing.T) {
	nw := witnessNet(t)
	l := nw.leaders()[0]
	q := Message{Type: Query, Cluster: "test", From: "who-1", Incarnation: 1, Seq: 1, Flags: FlagClient, Nonce: 42,
		Payload: make([]byte, ClientQueryPad)}
	w := nw.nodes["w"]
	w.Step(nw.now, q)
	out := w.Ready()
	require.Len(t, out, 1)
	m := out[0].Msg
	assert.Equal(t, "who-1", out[0].To)
	assert.Equal(t, Query, m.Type)
	assert.Equal(t, FlagReport|FlagWitness, m.Flags&(FlagReport|FlagWitness))
	assert.Equal(t, uint64(42), m.Nonce)
	assert.Equal(t, l, m.Leader)
	assert.Equal(t, nw.nodes[l].Status().Leader.Term, m.Term)

	f := nw.nodes[map[string]string{"a": "b", "b": "a"}[l]]
	f.Step(nw.now, q)
	assert.Empty(t, f.Ready())
	assert.Equal(t, DropNotLeader, f.LastDrop())
}

// TestWitnessAnswersALonelyClaimant: in quorum mode followers are silent
// to one another, so when the leader of two servers and a witness dies,
// the survivor hears nobody; once its detector waits as long as isolation
// takes (10 intervals: the adaptive threshold's cap, reached at 20 %
// loss) its claims say it is isolated, and nobody votes for an isolated
// claimant. Here the witness's own queries are lost: the witness must
// tell the claimant it is heard, with a term that does not end the claim,
// so that the claim's resend wins its vote — the first claim, not one
// after backoffs.
func TestWitnessAnswersALonelyClaimant(t *testing.T) {
	nw := witnessNet(t, func(c *Config) { c.Misses, c.MaxMisses, c.PauseThreshold = 10, 10, 0 })
	first := nw.leaders()[0]
	other := map[string]string{"a": "b", "b": "a"}[first]
	oldTerm := nw.nodes[first].Status().Leader.Term
	nw.lose = func(from string, e Envelope) bool { return from == "w" && e.Msg.Type == Query && e.To == "" }
	w := nw.nodes["w"]
	claims := nw.nodes[other].Stats().Elections
	nw.down[first] = true
	for range 1000 {
		nw.run(10 * time.Millisecond)
		if len(nw.leaders()) > 0 {
			break
		}
	}
	s := nw.nodes[other].Stats()
	require.Equal(t, []string{other}, nw.leaders(), "the survivor leads on the witness's vote (%d claims, %d votes)", s.ClaimsSent, w.Stats().VotesGranted)
	assert.Equal(t, claims+1, s.Elections, "its first claim won")
	assert.Positive(t, w.Stats().VotesGranted)
	assert.Greater(t, nw.nodes[other].Status().Leader.Term, oldTerm)
}

// TestWitnessAsksWithALeaderTerm: the QUERY a witness broadcasts while it
// follows nobody says the newest leader term it knows, not a claim's term
// it has seen — a candidate gives up a claim on a QUERY of its own term —
// so a witness asking "who leads?" during a claim's window does not end
// the claim it is about to vote for.
func TestWitnessAsksWithALeaderTerm(t *testing.T) {
	nw, w, other, leaderTerm, cl := witnessAlone(t)
	w.Step(nw.now, cl) // ignored while it follows its leader, but seen
	require.Equal(t, cl.Term, w.Status().Term)
	var asked []Message
	nw.lose = func(from string, e Envelope) bool {
		if from == "w" && e.Msg.Type == Query && e.To == "" {
			asked = append(asked, e.Msg)
		}
		return false
	}
	for range 100 {
		if nw.run(100 * time.Millisecond); len(asked) > 0 {
			break
		}
	}
	require.NotEmpty(t, asked, "a witness that follows nobody asks who leads")
	assert.Equal(t, leaderTerm, asked[0].Term)

	cand := nw.nodes[other]
	for cand.Status().Role != election.Candidate {
		cand.Tick(cand.NextTick())
	}
	q := asked[0]
	q.Term = cand.claimTerm // what it said before: the newest term seen
	cand.Step(cand.now, q)
	assert.NotEqual(t, election.Candidate, cand.Status().Role, "a QUERY of the claim's term ends the claim")
}

// TestOnlyAWitnessAnswersAnIsolatedClaimant: an isolated claim of a new
// term gets a QUERY with the leader term from a witness, and nothing from
// a full node, whose own claim is what ends a claimant's isolation.
func TestOnlyAWitnessAnswersAnIsolatedClaimant(t *testing.T) {
	nw := witnessNet(t)
	first := nw.leaders()[0]
	other := map[string]string{"a": "b", "b": "a"}[first]
	leaderTerm := nw.nodes["w"].Status().Leader.Term
	cl := claim("c", 100, TermRound(leaderTerm)+1, 1)
	cl.Flags = FlagIsolated
	for id, want := range map[string]int{"w": 1, other: 0} {
		n := nw.nodes[id]
		n.Step(nw.now, cl)
		var out []Envelope
		for _, e := range n.Ready() {
			if e.To == "c" {
				out = append(out, e)
			}
		}
		require.Len(t, out, want, "%s answers", id)
		if want == 1 {
			assert.Equal(t, Query, out[0].Msg.Type)
			assert.Equal(t, leaderTerm, out[0].Msg.Term, "the leader term, not the claim's")
		}
	}
}

// TestBackingOffWitnessYieldsToAClaim: a witness that suspected its leader
// backs off as any follower does, but it never claims, so a claim of lower
// priority than its own (every server's, a witness being of priority 255
// here) is not one its own claim will beat: it yields to it and votes,
// rather than ignore it until its backoff ends.
func TestBackingOffWitnessYieldsToAClaim(t *testing.T) {
	nw, w, _, _, cl := witnessAlone(t)
	for i := 0; i < 10000 && w.fstate != backingOff; i++ {
		nw.run(time.Millisecond)
	}
	require.Equal(t, backingOff, w.fstate, "precondition: the witness suspected its leader")
	require.True(t, nw.now.Before(w.waitUntil), "precondition: backing off")
	w.Step(nw.now, cl)
	w.Ready()
	assert.NotEqual(t, backingOff, w.fstate, "the witness yields to the claim")
}

// witnessAlone returns witnessNet with both servers down, the witness w,
// the server that did not lead (other), the term w knows it led under, and
// a claim from other of the next round.
func witnessAlone(t *testing.T) (nw *net, w *Node, other string, leaderTerm uint64, cl Message) {
	t.Helper()
	nw = witnessNet(t)
	first := nw.leaders()[0]
	other = map[string]string{"a": "b", "b": "a"}[first]
	w = nw.nodes["w"]
	leaderTerm = w.Status().Leader.Term
	nw.down[first], nw.down[other] = true, true
	cl = claim(other, 100, TermRound(leaderTerm)+1, 1<<40)
	cl.Incarnation = nw.nodes[other].cfg.Incarnation
	return nw, w, other, leaderTerm, cl
}
