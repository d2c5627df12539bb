package election

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// FixedConfig configures a Fixed elector.
type FixedConfig struct {
	// Mode names the mode in logs and errors ("static", "env").
	Mode string
	// Node is this node's id.
	Node string
	// Leads is the decision: whether this node leads.
	Leads bool
	// Leader is the leader a follower knows of; zero if it cannot know
	// (env mode). Ignored when Leads is set.
	Leader LeaderInfo
	// Term is the one term of the mode's cluster.
	Term uint64
	// Logger receives the decision; nil means slog.Default().
	Logger *slog.Logger
	// Why are log attributes explaining the decision (what matched, which
	// variable), logged with it.
	Why []any
}

// Fixed is the Elector of modes whose decision is made once, before Run, and
// holds for the life of the process: static and env. Run reports the
// decision, waits for its context, then steps down. Modes embed it and add
// how they decide.
type Fixed struct {
	cfg FixedConfig

	mu      sync.Mutex
	started bool
	// joined is set once Run has reported the role.
	joined bool
	// n reports and holds the status once Run has started; nil before.
	n *Notifier
}

// NewFixed returns a Fixed elector for a decision already made.
func NewFixed(cfg FixedConfig) *Fixed {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Fixed{cfg: cfg}
}

// Run reports the decision through cb (a leader: OnNewLeader(self) then
// OnStartedLeading(ctx, term); a follower: OnNewLeader of the leader it
// knows, if any), blocks until ctx is done, then steps down and returns nil.
func (f *Fixed) Run(ctx context.Context, cb Callbacks) error {
	n := NewNotifier(ctx, cb, f.idle())
	f.mu.Lock()
	if f.started {
		f.mu.Unlock()
		return fmt.Errorf("%s: Run called twice", f.cfg.Mode)
	}
	f.started, f.n = true, n
	f.mu.Unlock()

	s := Status{Node: f.cfg.Node, Role: Follower, Term: f.cfg.Term, Since: time.Now(), Leader: f.cfg.Leader}
	if f.cfg.Leads {
		s.Role, s.Leader = Leader, LeaderInfo{ID: f.cfg.Node, Term: f.cfg.Term}
		f.cfg.Logger.Info(f.cfg.Mode+": this node leads", append(f.cfg.Why, "term", f.cfg.Term)...)
	} else {
		f.cfg.Logger.Info(f.cfg.Mode+": this node follows", f.cfg.Why...)
	}
	n.Update(s)
	f.mu.Lock()
	f.joined = true
	f.mu.Unlock()

	<-ctx.Done()
	final := n.Status()
	if final.Role == Leader {
		f.cfg.Logger.Info(f.cfg.Mode+": stepping down", "term", f.cfg.Term)
		final = Status{Node: f.cfg.Node, Role: Follower, Term: f.cfg.Term, Since: time.Now()}
	}
	n.Stop(final)
	return nil
}

// Status returns this node's view: before Run a follower that knows no
// leader, during Run the decision, after Run a follower (a leader has
// stepped down and knows no leader).
func (f *Fixed) Status() Status {
	f.mu.Lock()
	n := f.n
	f.mu.Unlock()
	if n == nil {
		return f.idle()
	}
	return n.Status()
}

// Joined reports whether Run has reported this node's role: readiness for
// modes where a follower may never know who leads.
func (f *Fixed) Joined() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.joined
}

// idle is the status before Run: nothing has been reported yet.
func (f *Fixed) idle() Status {
	return Status{Node: f.cfg.Node, Role: Follower}
}
