package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// Step processes one received message. m.Addr is the sender's address as
// seen by the transport. Messages of other clusters, our own echoes,
// malformed, unknown, duplicated, reordered or replayed messages are
// counted in Stats.Dropped and otherwise ignored. Step never panics on
// message content.
func (n *Node) Step(now time.Time, m Message) {
	now = n.enter(now)
	defer n.leave()
	defer n.reprove(now)
	n.lastDrop = n.check(&m)
	n.newPeer = false
	switch {
	case n.lastDrop == DropSelf:
		n.onEcho(&m)
	case n.lastDrop == DropDuplicateID && !n.quiet:
		n.onDuplicate(now, &m)
	}
	if n.lastDrop == "" {
		n.lastDrop = n.admit(now, &m)
	}
	if n.lastDrop == "" && n.quiet {
		n.lastDrop = DropQuiet
	}
	if n.lastDrop == "" && isClientQuery(&m) {
		n.lastDrop = n.stepClientQuery(now, &m)
		if n.lastDrop == "" {
			n.stats.Received[m.Type]++
			return
		}
	}
	if n.lastDrop != "" {
		n.stats.Dropped[n.lastDrop]++
		return
	}
	n.stats.Received[m.Type]++
	n.observeTerm(m.Term)
	n.noteMember(now, m.From)
	n.heardPeer(now, &m)
	n.queuePayload(&m)
	switch m.Type {
	case Heartbeat, Answer:
		n.stepLeaderMsg(now, &m)
	case Claim:
		n.stepClaim(now, &m)
	case Resign:
		n.stepResign(now, &m)
	case Query:
		n.stepQuery(now, &m)
	case Vote:
		n.stepVote(now, &m)
	case Ack:
		n.stepAck(&m)
	case Probe:
		n.stepProbe(now, &m)
	case ProbeAnswer:
		n.stepProbeAnswer(now, &m)
	}
}

// LastDrop returns why the last Step dropped its message, or "" if it was
// accepted: the per-packet result for metrics, without copying Stats.
func (n *Node) LastDrop() DropReason { return n.lastDrop }

// check applies the stateless validity rules.
func (n *Node) check(m *Message) DropReason {
	if m.Cluster != n.cfg.Cluster {
		return DropOtherCluster
	}
	if m.From == "" || len(m.From) > maxIDLen {
		return DropMalformed
	}
	if m.From == n.cfg.NodeID {
		if m.Incarnation == n.cfg.Incarnation {
			return DropSelf
		}
		return DropDuplicateID
	}
	if m.Incarnation == 0 {
		return DropMalformed
	}
	switch m.Type {
	case Heartbeat, Answer:
		if m.Leader != m.From || TermRound(m.Term) == 0 {
			return DropMalformed
		}
		if m.Type == Heartbeat && m.Beat == 0 {
			return DropMalformed
		}
	case Claim, Resign:
		if TermRound(m.Term) == 0 {
			return DropMalformed
		}
	case Query, Ledger:
	case Trigger:
		if m.Flags&FlagClient == 0 {
			return DropMalformed
		}
	case TriggerAnswer:
		return DropUnsupported // for clients only
	case Probe:
		if m.Leader == "" || m.Nonce == 0 || TermRound(m.Term) == 0 {
			return DropMalformed
		}
	case ProbeAnswer:
		if m.Leader != "" || m.Nonce == 0 || len(m.Payload) > 0 || TermRound(m.Term) == 0 {
			return DropMalformed
		}
	case Vote, Ack:
		if !n.q.on() {
			return DropUnsupported
		}
		if m.Leader == "" || TermRound(m.Term) == 0 {
			return DropMalformed
		}
	default:
		return DropUnknownType
	}
	return ""
}

// stepLeaderMsg handles a Heartbeat or Answer: m.From says it leads m.Term.
func (n *Node) stepLeaderMsg(now time.Time, m *Message) {
	stale := m.Term < n.maxLeaderTerm
	if m.Term > n.maxLeaderTerm {
		n.maxLeaderTerm = m.Term
	}
	switch n.role {
	case election.Leader:
		if m.Type == Heartbeat {
			// Our next heartbeat shows the rival we hear it.
			n.heard = Evidence{Term: m.Term, Beat: m.Beat}
		}
		// Two leaders hear each other (a healed partition, or we were
		// paused): the worse steps down at once if the better shows it
		// hears it (evidence.go); the better answers at once, with that
		// evidence, so the worse learns without waiting an interval.
		if better(m.Term, m.Priority, m.From, n.leader.Term, n.cfg.Priority, n.cfg.NodeID) {
			if n.leaderGivesWay(now, m) {
				n.follow(now, m)
				return
			}
		} else {
			n.noteRival(now, m)
		}
		n.answerBeat(now)
	case election.Candidate:
		// A live leader: yield, unless we are preempting a lower-priority
		// one on purpose. Stale leaders (older than one we know) do not
		// stop a claim.
		if stale {
			n.stats.StaleLeaderIgnored++
			n.noteRival(now, m)
			n.heardStale(m)
			return
		}
		if n.claimPreempt && m.Priority < n.cfg.Priority && m.Flags&FlagRefused == 0 {
			return // it will step down: we preempt it on purpose
		}
		n.follow(now, m)
	default:
		ours := n.fstate == following && m.From == n.leader.ID
		if ours && (m.Term == n.leader.Term || m.Term > n.leader.Term && !stale) {
			// Our leader (refresh), or our leader under a term it won by a
			// claim we missed: a new leadership of the node we hear just
			// now, which needs no evidence (we would have yielded to the
			// claim too).
			n.follow(now, m)
			n.presence(now, m)
		} else if n.fstate == following && !better(m.Term, m.Priority, m.From, n.leader.Term, n.leaderPrio, n.leader.ID) {
			n.stats.StaleLeaderIgnored++
			n.noteRival(now, m)
			return
		} else if n.fstate == following && !n.followerGivesWay(now, m) {
			return
		} else if stale {
			n.stats.StaleLeaderIgnored++
			n.noteRival(now, m)
			if n.fstate != following {
				n.heardStale(m)
			}
			return
		} else {
			n.follow(now, m)
		}
		if n.cfg.Preempt && m.Priority < n.cfg.Priority && m.Type == Heartbeat {
			// On a heartbeat, so the claim's evidence shows we hear it.
			n.campaign(now, true)
		}
	}
	if n.q.on() && m.Type == Heartbeat && n.role == election.Follower && n.fstate == following &&
		n.leader.ID == m.From && n.leader.Term == m.Term {
		n.ack(now, m)
	}
}

// stepClaim handles CLAIM(m.Term) from m.From.
func (n *Node) stepClaim(now time.Time, m *Message) {
	if m.Flags&FlagIsolated != 0 && n.role != election.Leader {
		// A claimant that hears nobody could not lead anyone; tell it if
		// we hear a live leader (reject.go), so it does not lead alone.
		// Else, if its term is older than a leader we know (it slept or
		// was cut off while others led), correct it as any stale
		// claimant: alone or not, it must not lead with an old term.
		// Else, if we are a witness, tell it that it is heard.
		switch {
		case n.reject(now, m):
		case n.role == election.Follower && m.Term <= n.newestLeaderTerm():
			n.correct(now, m.From)
		default:
			n.witnessHears(now, m)
		}
		return
	}
	switch n.role {
	case election.Leader:
		if m.Flags&FlagPreempt != 0 && m.Priority > n.cfg.Priority && m.Term > n.leader.Term {
			if n.hearsUs(m.Heard) {
				// VRRP preemption: a better node takes over on purpose.
				n.wait(now, n.yieldWait())
				return
			}
			// It shows no sign of hearing us (it was paused, or cannot
			// receive): refuse, explicitly, so it does not lead beside us.
			n.hear.refuseUntil = now.Add(n.t.ClaimWindow)
		}
		// A live leader answers at once; the claimant yields on hearing it.
		n.answerBeat(now)
	case election.Candidate:
		if better(m.Term, m.Priority, m.From, n.claimTerm, n.cfg.Priority, n.cfg.NodeID) {
			n.yieldTo(now, m)
		}
	default:
		if m.Term <= n.newestLeaderTerm() {
			// Older than a leader we know: the claimant restarted and has
			// not heard the current term (its leader may be dead or
			// paused). Tell it, so it does not lead with a lower term.
			n.correct(now, m.From)
			return
		}
		switch n.fstate {
		case following:
			if now.Before(n.followDeadline()) && m.From != n.leader.ID {
				// Our leader was heard recently: ignore, and say so if the
				// claimant shows no sign of hearing it (reject.go).
				n.reject(now, m)
				return
			}
			// Suspected, or our leader itself claims: it stepped down
			// (lost its lease in quorum mode) and asks again.
			n.yieldTo(now, m)
		case backingOff:
			if m.Priority < n.cfg.Priority && !n.cfg.Witness {
				return // our own claim, due soon, will beat it
			}
			n.yieldTo(now, m)
		case waiting:
			n.yieldTo(now, m)
		}
	}
}

// stepResign handles a leader (or candidate) leaving.
func (n *Node) stepResign(now time.Time, m *Message) {
	if n.role == election.Follower {
		// The leader (or candidate) we granted has stopped for good:
		// release the grant so a successor can be voted in at once.
		n.q.release(m.Term, m.From)
		if n.q.on() && m.Leader == "" {
			return // a candidate gave up its claim; nothing else changes
		}
	}
	if n.role != election.Follower || m.Term < n.maxLeaderTerm {
		return
	}
	if n.fstate == following && m.From != n.leader.ID {
		return // someone else resigning; our leader is fine
	}
	if m.Leader == m.From && len(m.Payload) > 0 && m.Term >= n.lpTerm {
		// A leader's last word: its final payload, which the successor
		// must hold before it takes over.
		n.lpLeader, n.lpTerm = m.From, m.Term
		n.lpPayload = append([]byte(nil), m.Payload...)
	}
	switch m.Successor {
	case n.cfg.NodeID:
		n.campaign(now, false)
	case "":
		n.backOff(now, 0)
	default:
		// Let the successor claim first; if it is gone, claim by backoff.
		n.backOff(now, n.cfg.ClaimWindow)
	}
}

// stepQuery answers "who leads?" when we do. A candidate that learns from
// a query (a correction, or a paused leader's) of a term above its claim
// gives the claim up: it would lead with a term older than one already in
// use. It claims again, higher, after the usual wait.
func (n *Node) stepQuery(now time.Time, m *Message) {
	if m.Flags&FlagRejected != 0 {
		n.stepRejected(now, m)
		return
	}
	if m.Flags&FlagReport != 0 {
		return // a follower's rival report: its evidence is all it says
	}
	if m.Leader == "" && n.newPeer {
		n.introduce(m.From) // a node starting: it may not know us
	}
	// An equal term is as bad: terms are unique per node, so a leader
	// already used it, which can only be this node's previous incarnation
	// (restarted before anyone suspected it): leading it again would give
	// two incarnations one fencing token and hide the restart.
	if n.role == election.Candidate && m.Term >= n.claimTerm {
		n.wait(now, n.yieldWait())
		return
	}
	if n.role != election.Leader {
		return
	}
	n.emit(m.From, Message{Type: Answer, Term: n.leader.Term, Leader: n.cfg.NodeID, Nonce: m.Nonce, Payload: n.payload})
}

// witnessHears tells m's sender, a claimant that says it is isolated, that
// a witness hears it. In quorum mode followers are silent to one another
// (their ACKs go to the leader), so once the leader is gone a follower
// hears nobody, and an adaptive detector at its cap (MaxMisses, 10
// intervals at 20 % loss) suspects just as isolation (10 intervals) sets
// in: its claims say it is isolated, and nobody votes for an isolated
// claimant (it may be deaf, and a vote would bind us to it for a whole
// promise). Among full nodes another claimant's claim ends the isolation;
// a witness never claims, so with two servers and a witness only the
// witness's queries, one per Suspect, did, and under loss the failover
// waited seconds for one to arrive (benchmarks.md). So a witness that
// ignores an isolated claim of a term newer than any leader it knows sends
// the claimant a unicast QUERY: a deaf claimant never receives it and
// stays ignored; a lonely one does, before its claim's resend half a
// window later, which wins the vote if the witness may grant it by then
// (its own detector's deadline, a moment after the claimant's, has
// passed). Only a witness: a full node answering too let a lonely
// claimant compete with the one whose claim had ended its isolation, and
// split votes cost five nodes 150 ms at p90 under 20 % loss. The QUERY
// grants nothing. It says the newest leader term the witness knows, older
// than the claim, so the candidate does not give up its claim
// (stepQuery); knowing none, it says nothing. At most one per W/4, shared
// with corrections.
func (n *Node) witnessHears(now time.Time, m *Message) {
	if !n.cfg.Witness || n.role != election.Follower || n.newestLeaderTerm() == 0 {
		return
	}
	if !n.lastCorrect.IsZero() && now.Sub(n.lastCorrect) < n.cfg.ClaimWindow/4 {
		return
	}
	n.lastCorrect = now
	n.emit(m.From, Message{Type: Query, Term: n.newestLeaderTerm()})
}

// correct tells a stale claimant the newest leader term we know, with a
// unicast QUERY (Term = that term, Leader = our leader). At most one per
// W/4, so forged claims cannot make us flood.
func (n *Node) correct(now time.Time, to string) {
	if n.newestLeaderTerm() == 0 {
		return
	}
	if !n.lastCorrect.IsZero() && now.Sub(n.lastCorrect) < n.cfg.ClaimWindow/4 {
		return
	}
	n.lastCorrect = now
	n.emit(to, Message{Type: Query, Term: n.newestLeaderTerm(), Leader: n.leader.ID})
}
