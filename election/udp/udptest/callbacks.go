package udptest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
)

// The protocol invariants (invariants.go) look at protocol.Node only. The
// application sees leadership through election.Callbacks, which a Notifier
// derives from Node.Status(); a bug there (the Notifier once took
// Status.Term, the highest term seen, as the leadership's term, so a leader
// answering a rival was told it restarted under the rival's term) is
// invisible to them. So every simulated process also has an application: a
// Notifier fed exactly as udp.Elector.Run feeds it (Update with
// Node.Status() after every Tick and Step, Stop after Resign), whose
// callbacks are recorded and checked as they happen and after every event.

// CallbackKind names what a simulated node's application was told.
type CallbackKind int

const (
	// StartedLeading is OnStartedLeading(ctx, Term).
	StartedLeading CallbackKind = iota
	// StoppedLeading is OnStoppedLeading().
	StoppedLeading
	// NewLeader is OnNewLeader(Leader).
	NewLeader
	// Exited is not a callback: the process ended (crash, or exit after
	// Stop), taking its application and any leadership context with it.
	Exited
)

// String returns the callback's name.
func (k CallbackKind) String() string {
	switch k {
	case StartedLeading:
		return "started"
	case StoppedLeading:
		return "stopped"
	case NewLeader:
		return "new-leader"
	case Exited:
		return "exited"
	default:
		return fmt.Sprintf("kind(%d)", int(k))
	}
}

// CallbackEvent is one entry of a node's callback record.
type CallbackEvent struct {
	// At is the simulated time since the start.
	At time.Duration
	// Inc is the incarnation of the process that was told.
	Inc uint64
	// Kind is what it was told.
	Kind CallbackKind
	// Term is the leadership's term (StartedLeading only).
	Term uint64
	// Leader is the new leader (NewLeader only).
	Leader election.LeaderInfo
}

// app is one process life's application: its Notifier and what the
// callbacks have told it so far.
type app struct {
	notifier *election.Notifier
	cb       election.Callbacks
	// exit cancels the parent of every leadership context: the process
	// dies with its application.
	exit context.CancelFunc
	// leading, ctx and term are the current leadership as the callbacks
	// told it; ctx is nil while not leading.
	leading bool
	ctx     context.Context
	term    uint64
	// lastStart is the term of the latest OnStartedLeading in this life.
	lastStart uint64
	// leader is the argument of the latest OnNewLeader.
	leader election.LeaderInfo
	// resigned is set once Resign ran: Run's last report goes through
	// Notifier.Stop, and nothing follows but the exit.
	resigned bool
}

// bootApp gives sn's new process life its application, with a Notifier
// whose initial status is the new Node's, as udp.New records it.
func (s *Sim) bootApp(sn *simNode) {
	if s.opts.NoCheck {
		sn.app = nil // benchmarks: the figures do not need it
		return
	}
	ctx, exit := context.WithCancel(context.Background())
	a := &app{exit: exit}
	a.cb = s.appCallbacks(sn, a)
	a.notifier = election.NewNotifier(ctx, a.cb, s.fed(sn.n.Status()))
	sn.app = a
}

// appCallbacks returns the callbacks of a, which check the ordering
// promises of election.Callbacks the moment they are called.
func (s *Sim) appCallbacks(sn *simNode, a *app) election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: func(ctx context.Context, term uint64) {
			s.record(sn, CallbackEvent{Kind: StartedLeading, Term: term})
			s.logf("%s cb started term=%x", sn.id, term)
			if a.leading {
				s.fail("%s: OnStartedLeading(term %x) while still leading term %x: no OnStoppedLeading between", sn.id, term, a.term)
			}
			if ctx.Err() != nil {
				s.fail("%s: OnStartedLeading(term %x) with an already cancelled context", sn.id, term)
			}
			if a.lastStart != 0 && term <= a.lastStart {
				s.fail("%s (inc %x): starts leading term %x, not above its earlier leadership term %x", sn.id, sn.inc, term, a.lastStart)
			}
			if a.leader.ID != sn.id || a.leader.Term != term {
				s.fail("%s: OnStartedLeading(term %x) but the last OnNewLeader named %q term %x, not itself", sn.id, term, a.leader.ID, a.leader.Term)
			}
			if o, ok := s.inv.started[term]; ok && o != sn.id {
				s.fail("callbacks: two nodes started leading term %x: %s and %s", term, o, sn.id)
			}
			s.inv.started[term] = sn.id
			a.leading, a.ctx, a.term, a.lastStart = true, ctx, term, term
		},
		OnStoppedLeading: func() {
			s.record(sn, CallbackEvent{Kind: StoppedLeading})
			s.logf("%s cb stopped", sn.id)
			if !a.leading {
				s.fail("%s: OnStoppedLeading without a leadership to stop", sn.id)
				return
			}
			if a.ctx.Err() == nil {
				s.fail("%s: OnStoppedLeading(term %x) before the leadership context was cancelled", sn.id, a.term)
			}
			a.leading, a.ctx = false, nil
		},
		OnNewLeader: func(l election.LeaderInfo) {
			s.record(sn, CallbackEvent{Kind: NewLeader, Leader: l})
			s.logf("%s cb new-leader %q term=%x", sn.id, l.ID, l.Term)
			a.leader = l
		},
	}
}

func (s *Sim) record(sn *simNode, e CallbackEvent) {
	e.At, e.Inc = s.Elapsed(), sn.inc
	sn.callbacks = append(sn.callbacks, e)
}

// notify feeds sn's status to its Notifier as udp.Elector.Run does (Update
// after a Tick or Step, Stop after Resign), then checks that what the
// application was told matches the protocol.
func (s *Sim) notify(sn *simNode) {
	a := sn.app
	if a == nil {
		return
	}
	st := sn.n.Status()
	fed := s.fed(st)
	if a.resigned {
		a.notifier.Stop(fed)
		if a.leading {
			s.fail("%s: still leading (term %x) after Notifier.Stop", sn.id, a.term)
		}
		return
	}
	a.notifier.Update(fed)
	if a.leading {
		if st.Role != election.Leader {
			s.fail("%s: callbacks say it leads term %x, the protocol says %s", sn.id, a.term, st.Role)
		} else if a.term != st.Leader.Term {
			s.fail("%s: callbacks say it leads term %x, the protocol says it leads term %x (highest seen %x)", sn.id, a.term, st.Leader.Term, st.Term)
		}
		if a.ctx.Err() != nil {
			s.fail("%s: leadership context of term %x cancelled while still leading", sn.id, a.term)
		}
	} else if st.Role == election.Leader {
		s.fail("%s: the protocol leads term %x but OnStartedLeading was not called", sn.id, st.Leader.Term)
	}
	if a.leader != fed.Leader {
		s.fail("%s: last OnNewLeader named %q term %x, the Notifier was fed %q term %x", sn.id, a.leader.ID, a.leader.Term, fed.Leader.ID, fed.Leader.Term)
	}
}

// fed is the status a Notifier is given for st: st itself unless a test
// set Options.feed.
func (s *Sim) fed(st election.Status) election.Status {
	if s.opts.feed != nil {
		return s.opts.feed(st)
	}
	return st
}

// exitApp ends sn's application with its process: no callbacks (a
// crashed process runs none), every context it held is cancelled.
func (s *Sim) exitApp(sn *simNode) {
	a := sn.app
	if a == nil {
		return
	}
	a.exit()
	s.record(sn, CallbackEvent{Kind: Exited})
	sn.app = nil
}

// checkApps checks, after every event, that no two running applications
// hold a live leadership context of the same term.
func (s *Sim) checkApps() {
	for i, id := range s.ids {
		a := s.nodes[id].app
		if a == nil || !a.leading || a.ctx.Err() != nil {
			continue
		}
		for _, o := range s.ids[i+1:] {
			b := s.nodes[o].app
			if b != nil && b.leading && b.ctx.Err() == nil && b.term == a.term {
				s.fail("callbacks: %s and %s both hold a live leadership context of term %x", id, o, a.term)
				return
			}
		}
	}
}

// Callbacks returns what id's application was told over the whole run,
// every process life in order (Exited ends each finished one). Empty with
// Options.NoCheck.
func (s *Sim) Callbacks(id string) []CallbackEvent {
	return slices.Clone(s.mustNode(id).callbacks)
}
