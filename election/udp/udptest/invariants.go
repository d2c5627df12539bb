package udptest

import (
	"fmt"

	"github.com/lanleader/lanleader/election"
)

// invariants are the safety properties checked after every event.
//
//   - A node's highest seen term never decreases within an incarnation.
//   - Never two leaders (different node ids) in the same term, over the
//     whole run, partitions included.
//   - A node never changes term while staying leader.
//   - A follower only ever names a (leader, term) pair that really led.
//   - While the run is "clean" (no loss, no partition or cut, never every
//     node down at once), every new leadership's term is greater than every
//     earlier one: terms strictly increase across leaders; and at most one
//     running, unpaused node may act as leader (CanActAsLeader) at any
//     instant.
//   - A node deaf (Sim.Deaf) for longer than a promise never acts as
//     leader in quorum mode; with SelfEcho, a node deaf for longer than a
//     claim window never becomes leader (hearing.go).
//   - What the applications are told through election.Callbacks agrees
//     with the protocol and keeps the Callbacks ordering promises; no two
//     nodes ever start leading the same term (callbacks.go).
type invariants struct {
	owner         map[uint64]string
	maxLeaderTerm uint64
	// dirty is set once the run stops being clean (see above).
	dirty bool
	// started maps a term to the node whose application was told it leads
	// that term (OnStartedLeading), over the whole run.
	started map[uint64]string
}

func (v *invariants) init() { v.owner, v.started = map[uint64]string{}, map[uint64]string{} }

// MarkDirty records that the run is no longer clean: loss or partitions
// can legitimately produce a leader whose term is lower than an earlier
// one elsewhere (documented: no quorum).
func (s *Sim) MarkDirty(why string) {
	if !s.inv.dirty {
		s.logf("run no longer clean: %s", why)
	}
	s.inv.dirty = true
}

func (s *Sim) fail(format string, args ...any) {
	if s.Err == nil {
		s.Err = fmt.Errorf("at %v: "+format, append([]any{s.Elapsed()}, args...)...)
		s.logf("INVARIANT VIOLATED: %v", s.Err)
	}
}

// observe checks sn's new state and records transitions.
func (s *Sim) observe(sn *simNode) {
	st := sn.n.Status()
	check := !s.opts.NoCheck
	if check && st.Term < sn.maxTerm {
		s.fail("%s: term went back from %x to %x", sn.id, sn.maxTerm, st.Term)
	}
	sn.maxTerm = st.Term
	if check && sn.witness && st.Role != election.Follower {
		s.fail("%s is a witness and became %v", sn.id, st.Role)
	}
	switch st.Role {
	case election.Leader:
		t := st.Leader.Term
		if check && st.Leader.ID != sn.id {
			s.fail("%s leads but names %q as leader", sn.id, st.Leader.ID)
		}
		if check && sn.lastRole == election.Leader && sn.lastTerm != t {
			s.fail("%s changed term %x -> %x while leading", sn.id, sn.lastTerm, t)
		}
		if sn.lastRole != election.Leader {
			s.checkDeaf(sn, true)
			s.Counters.BecameLeader++
			if o, ok := s.inv.owner[t]; check && ok && o != sn.id {
				s.fail("two leaders in term %x: %s and %s", t, o, sn.id)
			}
			if check && !s.inv.dirty && t <= s.inv.maxLeaderTerm {
				s.fail("%s leads term %x, not above earlier leader term %x", sn.id, t, s.inv.maxLeaderTerm)
			}
			if check {
				s.inv.owner[t] = sn.id
			}
			if t > s.inv.maxLeaderTerm {
				s.inv.maxLeaderTerm = t
			}
			s.logf("%s LEADER term=%x", sn.id, t)
			if s.OnLeader != nil {
				s.OnLeader(sn.id, t, s.now)
			}
		}
	default:
		if l := st.Leader; check && l.Known() {
			if o, ok := s.inv.owner[l.Term]; !ok || o != l.ID {
				s.fail("%s follows %s in term %x, which never led it (owner %q)", sn.id, l.ID, l.Term, o)
			}
		}
		if sn.lastRole == election.Leader {
			s.logf("%s stepped down (now %s, leader %q)", sn.id, st.Role, st.Leader.ID)
		}
	}
	sn.lastRole, sn.lastTerm = st.Role, st.Leader.Term
}

// crashed is called when a node goes down.
func (v *invariants) crashed(s *Sim, sn *simNode) {
	sn.lastRole = election.Follower
	s.exitApp(sn)
	s.checkKnown()
}

// checkKnown marks the run dirty when no running, unpaused node knows the
// newest leader term: a node that (re)starts then cannot learn it, and may
// lead with a lower term (documented: full-cluster restart).
func (s *Sim) checkKnown() {
	if s.inv.dirty || s.inv.maxLeaderTerm == 0 {
		return
	}
	for _, id := range s.ids {
		sn := s.nodes[id]
		if sn.up && !sn.paused && sn.n.Status().Term >= s.inv.maxLeaderTerm {
			return
		}
	}
	s.MarkDirty("no running node knows the newest term")
}

// Leaders returns the running (not crashed) nodes whose role is leader,
// paused ones included, sorted.
func (s *Sim) Leaders() []string {
	var ls []string
	for _, id := range s.ids {
		sn := s.nodes[id]
		if sn.up && sn.n.Status().Role == election.Leader {
			ls = append(ls, id)
		}
	}
	return ls
}

// Converged reports nil if exactly one running, unpaused node leads, may
// act as leader, and every running node names it with its term.
func (s *Sim) Converged() error {
	ls := s.Leaders()
	if len(ls) != 1 {
		return fmt.Errorf("%d leaders %v", len(ls), ls)
	}
	lead := s.nodes[ls[0]].n
	ls0 := lead.Status().Leader
	if !lead.CanActAsLeader(s.nodeNow(s.nodes[ls[0]])) {
		return fmt.Errorf("leader %s may not act", ls[0])
	}
	for _, id := range s.ids {
		sn := s.nodes[id]
		if !sn.up {
			continue
		}
		if l := sn.n.Status().Leader; l.ID != ls0.ID || l.Term != ls0.Term {
			return fmt.Errorf("%s names leader %q term %x, want %q term %x", id, l.ID, l.Term, ls0.ID, ls0.Term)
		}
	}
	return nil
}

// checkExclusion enforces mutual exclusion of CanActAsLeader in clean runs.
// Without quorum a paused node does not count, nor one resumed that has
// not yet read what queued during its stall: a stall shorter than
// PauseThreshold goes unnoticed, and a claim it could not answer meanwhile
// is as good as lost (docs/protocol.md, "What is NOT guaranteed"); the
// successor's heartbeat is behind the claim in its queue.
//
// In quorum mode it is checked always — loss, partitions, restarts and
// pauses included, paused and waking nodes too: that is what quorum mode
// promises.
func (s *Sim) checkExclusion() {
	quorum := s.opts.Base.ClusterSize > 0
	if s.inv.dirty && !quorum {
		return
	}
	acting := ""
	for _, id := range s.ids {
		sn := s.nodes[id]
		if !sn.up || (sn.stalled() && !quorum) || !sn.n.CanActAsLeader(s.nodeNow(sn)) {
			continue
		}
		s.checkDeaf(sn, false)
		if acting != "" {
			s.fail("%s and %s may both act as leader (quorum=%v, clean=%v)", acting, id, quorum, !s.inv.dirty)
			return
		}
		acting = id
	}
}
