package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// enter clamps now so time never goes back and detects pauses. It is the
// first thing Tick, Step and Resign do.
func (n *Node) enter(now time.Time) time.Time {
	if now.Before(n.now) {
		now = n.now
	}
	n.now = now
	if !n.quiet && now.Sub(n.scheduled) > n.cfg.PauseThreshold {
		n.onPause(now)
	}
	return now
}

// leave records the schedule for the next pause check.
func (n *Node) leave() { n.scheduled = n.NextTick() }

// Tick advances timers to now. Call it at or soon after NextTick(); calling
// it earlier is harmless.
func (n *Node) Tick(now time.Time) {
	now = n.enter(now)
	defer n.leave()
	defer n.reprove(now)
	if n.quiet {
		return
	}
	n.countMembers(now)
	// A few passes: one deadline can lead straight to the next (suspicion
	// with a zero backoff draw claims at once).
	for range 4 {
		if !n.tickOnce(now) {
			return
		}
	}
}

// tickOnce fires at most one expired deadline, reporting whether it did.
func (n *Node) tickOnce(now time.Time) bool {
	switch n.role {
	case election.Leader:
		if n.cfg.SelfEcho && !n.hear.echoWant.IsZero() && now.Sub(n.hear.echoWant) >= n.t.Suspect {
			// Our own heartbeats stopped coming back: we cannot hear a
			// claim, a RESIGN or a query. Let a node that can hear lead.
			n.stats.DeafStepDown++
			n.hear.deafClaims++
			n.wait(now, n.deafRetry())
			return true
		}
		if !n.q.mayAct(now) {
			// A majority stopped acknowledging (or the cluster is larger
			// than ClusterSize): we may no longer be the only leader.
			// Step down; claim again later with votes.
			n.stats.LeaseLost++
			if !n.q.overfull() {
				n.q.loseMajority(n.q.reachable(now, true))
			}
			n.wait(now, n.t.YieldWait)
			return true
		}
		if r := n.leaseRetryAt(now); !r.IsZero() && !now.Before(r) && now.Before(n.nextBeat) {
			n.stats.LeaseRetries++
			n.beat(now)
			return true
		}
		if now.Before(n.nextBeat) {
			return false
		}
		n.beat(now)
		every := n.beatEvery(now)
		n.nextBeat = n.nextBeat.Add(every)
		if !n.nextBeat.After(now) {
			n.nextBeat = now.Add(every)
		}
		return true
	case election.Candidate:
		if !now.Before(n.claimUntil) {
			if n.cfg.SelfEcho && !n.hear.claimEchoed {
				if now.Before(n.claimDeafAt()) {
					return false // late, not lost: wait for it (hearing.go)
				}
				// Our claim did not come back: we cannot hear objections
				// (a live leader's answer). Do not lead; retry later.
				n.stats.DeafClaims++
				n.hear.deafClaims++
				n.abandonClaim()
				n.backOff(now, n.deafRetry())
				return true
			}
			if n.barred(now) {
				n.abandonClaim()
				n.wait(now, n.t.YieldWait)
				return true
			}
			if !n.q.won() {
				n.stats.QuorumFailed++
				if !n.q.overfull() {
					n.q.loseMajority(n.q.reachable(now, false))
				}
				n.abandonClaim()
				if len(n.q.votes) > 0 {
					// Free the voters at once: their grants to this
					// claim would otherwise refuse the next claimant
					// for a whole Promise, and claims that each win a
					// vote or two can starve one another for good.
					n.emit("", Message{Type: Resign, Term: n.claimTerm})
				}
				// A majority would not vote: most likely it follows a
				// leader whose term we wrongly consider stale (nodes that
				// restarted forgot newer terms). In quorum mode the lease,
				// not the term, keeps leaders exclusive, so accept whatever
				// leader the majority follows.
				n.forgotLeaderTerm = n.newestLeaderTerm()
				n.maxLeaderTerm = 0
				// Wait (voting for others' claims meanwhile), backing off
				// exponentially: a minority side must not claim at full
				// rate for the whole partition.
				n.wait(now, n.q.claimFailed(n.t.Interval))
				return true
			}
			n.lead(now)
			return true
		}
		if !n.claimResent && !now.Before(n.claimResendAt) {
			n.claimResent = true
			n.sendClaim()
			return true
		}
		return false
	}
	switch n.fstate {
	case following:
		if now.Before(n.followDeadline()) {
			return n.tickProbe(now)
		}
		n.suspectSilence(now)
	case waiting:
		if now.Before(n.waitUntil) {
			return false
		}
		if n.cfg.Witness {
			n.witnessAsks(now)
			return true
		}
		n.backOff(now, 0)
	case backingOff:
		if now.Before(n.waitUntil) {
			return false
		}
		n.campaign(now, false)
	}
	return true
}

// Resign stops taking part: a leader (or candidate) broadcasts Resign,
// naming the best peer it knows as successor, and every node becomes a
// follower that never sends again. Call it on graceful shutdown.
func (n *Node) Resign(now time.Time) {
	now = n.enter(now)
	defer n.leave()
	if n.quiet {
		return
	}
	switch n.role {
	case election.Leader:
		// The payload (job ledger) rides along: a heartbeat carrying the
		// latest one may be lost or overtaken by this very packet.
		n.emit("", Message{Type: Resign, Term: n.leader.Term, Leader: n.cfg.NodeID, Successor: n.successor(), Payload: n.payload})
	case election.Candidate:
		n.emit("", Message{Type: Resign, Term: n.claimTerm})
	}
	n.setRole(election.Follower)
	n.setLeader(election.LeaderInfo{}, 0)
	n.fstate = waiting
	n.quiet = true
}
