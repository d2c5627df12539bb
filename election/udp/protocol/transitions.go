package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/heartbeat"
)

// follow makes this node a follower of the leader that sent m (a Heartbeat
// or Answer), stepping down if it was leading or claiming.
func (n *Node) follow(now time.Time, m *Message) {
	if n.role == election.Candidate {
		n.abandonClaim()
	}
	if n.role == election.Leader {
		n.stats.SteppedDown++
	}
	sameLeader := n.fstate == following && n.leader.ID == m.From && n.leader.Term == m.Term
	n.setRole(election.Follower)
	n.fstate = following
	n.setLeader(election.LeaderInfo{ID: m.From, Addr: m.Addr, Term: m.Term}, m.Priority)
	if !sameLeader {
		n.det.Reset(now)
	}
	n.hear.rejections = 0
	if !sameLeader {
		n.leaderBeat = 0
		n.hear.reportAt = time.Time{} // tell the new leader soon that we hear it
	}
	if m.Type == Heartbeat {
		// Only heartbeats feed the detector: an Answer is sent to one
		// node, so its absence elsewhere is not loss.
		if sameLeader && m.Beat == n.leaderBeat+1 {
			n.noteBeatGap(now.Sub(n.det.Last()))
		}
		n.det.Observe(now, m.Beat)
		n.leaderBeat = max(n.leaderBeat, m.Beat)
		n.heard = Evidence{Term: m.Term, Beat: n.leaderBeat}
	}
	n.handOver(now, m, !sameLeader)
	n.lpLeader, n.lpTerm = m.From, m.Term
	n.lpPayload = append([]byte(nil), m.Payload...)
	n.listenUntil = time.Time{}
	n.relistenUntil = time.Time{}
	n.q.heardLeader()
}

// wait makes this node a leaderless follower that listens until now+d:
// after yielding to another node's claim, or when a preempting claim
// deposes us.
func (n *Node) wait(now time.Time, d time.Duration) {
	if n.role == election.Candidate {
		n.abandonClaim()
	}
	if n.role == election.Leader {
		n.stats.SteppedDown++
	}
	n.setRole(election.Follower)
	n.fstate = waiting
	n.waitUntil = now.Add(d)
	n.setLeader(election.LeaderInfo{}, 0)
}

// witnessAsks is what a witness that follows no leader does instead of
// claiming: it broadcasts "who leads?" (a QUERY, which a leader answers)
// and waits Suspect to ask again. It is also how the others hear it: a
// witness is otherwise silent but for the votes and acks it sends to one
// node, and a node that starts while the only other voter up is a witness
// would hear nobody, count itself isolated, and its claims would get no
// vote. The QUERY says the newest leader term the witness knows, not the
// newest term it has seen: a claim it heard raised that, and a candidate
// takes a QUERY of its claim's term as word that a leader used the term
// (stepQuery) and gives the claim up.
func (n *Node) witnessAsks(now time.Time) {
	n.wait(now, n.t.Suspect)
	n.emit("", Message{Type: Query, Term: n.newestLeaderTerm()})
}

// yieldTo gives way to m's claim: wait for the claimant's heartbeat and,
// in quorum mode, vote for it.
func (n *Node) yieldTo(now time.Time, m *Message) {
	n.wait(now, n.t.YieldWait)
	if n.q.on() {
		n.vote(now, m)
	}
}

// yieldWait is how long a node that yielded to a claim waits for the
// claimant's first heartbeat before it suspects again (Timings.YieldWait).
func (n *Node) yieldWait() time.Duration { return n.t.YieldWait }

// backOff starts the randomized wait before claiming; extra delays it (to
// let a named successor claim first).
func (n *Node) backOff(now time.Time, extra time.Duration) {
	n.suspect(now, extra+heartbeat.Backoff(n.cfg.Rand, n.cfg.Priority, n.t.BackoffMax))
}

// suspect makes this node a leaderless follower that claims at now+d,
// unless it hears a live leader or a claim it yields to first.
func (n *Node) suspect(now time.Time, d time.Duration) {
	n.stats.Suspicions++
	n.setRole(election.Follower)
	n.fstate = backingOff
	n.waitUntil = now.Add(d)
	n.setLeader(election.LeaderInfo{}, 0)
}

// campaign broadcasts CLAIM(next round) and waits ClaimWindow. A witness
// never claims: it asks who leads instead (witnessAsks).
func (n *Node) campaign(now time.Time, preempt bool) {
	if n.cfg.Witness {
		n.witnessAsks(now)
		return
	}
	if n.barred(now) {
		// A process with our id that started first is around: leading
		// would give two processes one id and, maybe, one term.
		n.wait(now, n.yieldWait())
		return
	}
	if n.round >= MaxRound {
		// Terms exhausted (or poisoned by a forged huge term): never
		// claim, never panic. Stay a waiting follower.
		n.wait(now, n.t.YieldWait)
		return
	}
	term := MakeTerm(n.round+1, n.cfg.Priority, n.tag)
	if !n.q.mayGrant(now, term, n.cfg.NodeID) {
		// Our claim is a vote for ourselves, and we granted someone else
		// (or, just started, maybe did in a previous life): claiming now
		// would break that. Claim after it runs out — plus a claim
		// window, since the other voters' grants to the same leader run
		// out a delivery later, plus a fresh backoff draw so the nodes
		// that were all waiting do not claim together and split the votes.
		n.setRole(election.Follower)
		n.setLeader(election.LeaderInfo{}, 0)
		n.fstate = backingOff
		n.waitUntil = n.q.grantedUntil().Add(n.t.ClaimWindow + heartbeat.Backoff(n.cfg.Rand, n.cfg.Priority, n.t.BackoffMax))
		if !n.waitUntil.After(now) {
			// Refused for another reason (the cluster is larger than
			// ClusterSize): try again later, which re-counts.
			n.waitUntil = now.Add(n.q.claimFailed(n.t.Interval))
		}
		// Ask who leads meanwhile: a leader answers, and the others hear
		// us. Nodes that all wait out a start-up promise (a cold start
		// without state files: the longest promise, as long as the
		// isolation threshold) would otherwise hear nobody, count
		// themselves isolated, and their first claims would get no vote.
		n.emit("", Message{Type: Query})
		return
	}
	n.round++
	n.claimTerm = term
	n.observeTerm(n.claimTerm)
	n.claimPreempt = preempt
	n.claimSent = now
	n.claimUntil = now.Add(n.t.ClaimWindow)
	n.claimResendAt = now.Add(n.t.ClaimResend)
	n.claimResent = false
	n.hear.claimEchoed = false
	n.stats.Elections++
	n.setRole(election.Candidate)
	n.setLeader(election.LeaderInfo{}, 0)
	n.adaptPromise()
	n.q.startClaim(now, n.claimTerm, n.cfg.NodeID)
	n.sendClaim()
}

func (n *Node) sendClaim() {
	var flags uint8
	if n.claimPreempt {
		flags = FlagPreempt
	}
	n.emit("", Message{Type: Claim, Term: n.claimTerm, Flags: flags, Payload: n.payload})
}

// lead makes this candidate leader of its claimed term and heartbeats at
// once, so followers learn it before any job fires.
func (n *Node) lead(now time.Time) {
	n.setRole(election.Leader)
	n.stats.BecameLeader++
	if n.claimTerm > n.maxLeaderTerm {
		n.maxLeaderTerm = n.claimTerm
	}
	n.setLeader(election.LeaderInfo{ID: n.cfg.NodeID, Addr: n.cfg.Addr, Term: n.claimTerm}, n.cfg.Priority)
	n.lpLeader, n.lpTerm, n.lpPayload = n.cfg.NodeID, n.claimTerm, n.payload
	n.listenUntil = time.Time{}
	n.q.startLease()
	n.sentVer = 0
	n.beat(now)
	n.nextBeat = now.Add(n.beatEvery(now))
}

// beatEvery is the leader's heartbeat period: Interval, or less in quorum
// mode while grants of a shorter timing hold the lease (quorumTracker.pace).
func (n *Node) beatEvery(now time.Time) time.Duration {
	if !n.q.on() {
		return n.t.Interval
	}
	return n.q.pace(now, n.t.Interval, min(n.cfg.Misses, paceBeats), n.t.ClaimWindow)
}

// beat broadcasts a heartbeat carrying the payload.
func (n *Node) beat(now time.Time) {
	n.lastBeat = now
	n.beats++
	var flags uint8
	if now.Before(n.hear.refuseUntil) {
		flags = FlagRefused
	}
	n.emit("", Message{Type: Heartbeat, Term: n.leader.Term, Leader: n.cfg.NodeID, Beat: n.beats, Flags: flags, Payload: n.payload})
	n.q.sent(n.seq, now)
	n.recordVersion()
}

// answerBeat heartbeats at once in reply to a claim or a rival leader,
// at most once per quarter claim window so a flood cannot amplify. Only
// answers count toward that limit, not the scheduled heartbeats: a claim
// that comes right after one was sent comes most likely from a follower
// that lost it, and the answer is all that keeps the claimant from
// leading beside us.
func (n *Node) answerBeat(now time.Time) {
	if !n.lastAnswer.IsZero() && now.Sub(n.lastAnswer) < n.cfg.ClaimWindow/4 {
		return
	}
	n.lastAnswer = now
	n.beat(now)
}

// onPause reacts to a call that came more than PauseThreshold late.
func (n *Node) onPause(now time.Time) {
	n.stats.Pauses++
	n.pausedAt = now
	switch n.role {
	case election.Leader:
		if !n.q.on() && now.Sub(n.lastBeat) >= n.t.Suspect {
			// Silent for as long as a follower waits before it suspects
			// us: a successor may have led a newer term meanwhile and be
			// gone now (or, after a host suspend, its heartbeats were
			// lost, not queued), and followers ignore our older term
			// without telling us. Nothing would stop us acting on it
			// beside the next leader they elect. Step down before
			// sending anything: leading again takes a new claim, which
			// any node knowing a newer term corrects. (In quorum mode
			// the lease decides: votes bind the voters until it ends.)
			n.stats.PausedStepDown++
			n.wait(now, n.t.YieldWait)
			n.emit("", Message{Type: Query})
			return
		}
		// A rival may have been elected while we slept. Reassert (a better
		// rival answers and we step down; a candidate yields) and ask; do
		// not act until a claim window passed without a better leader.
		n.beat(now)
		n.emit("", Message{Type: Query, Leader: n.cfg.NodeID})
		n.listenUntil = now.Add(n.cfg.ClaimWindow)
		n.nextBeat = now.Add(n.beatEvery(now))
	case election.Candidate:
		if n.q.on() {
			// Votes that arrived while we slept may be stale: the voters'
			// promises may have run out and someone else been elected.
			// Start over.
			n.abandonClaim()
			n.backOff(now, 0)
			return
		}
		// Our window may have passed unseen: claim again, full window.
		n.claimSent = now
		n.claimUntil = now.Add(n.t.ClaimWindow)
		n.claimResendAt = now.Add(n.t.ClaimResend)
		n.claimResent = false
		n.sendClaim()
	default:
		// Heartbeats may be queued behind our pause: give the leader one
		// interval before suspecting it.
		if n.fstate == following {
			n.relistenUntil = now.Add(n.t.Relisten)
		}
	}
}
