package env

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lanleader/lanleader/election"
)

// term is the only term an env cluster has: the variable is read once.
const term = 1

// Elector is the env election mode. Create it with New.
type Elector struct {
	nodeID  string
	varName string
	value   string
	set     bool
	leads   bool
	log     *slog.Logger

	mu      sync.Mutex
	started bool
	// joined is set once Run has reported the role.
	joined bool
	// n reports and holds the status once Run has started; nil before.
	n *election.Notifier
}

var _ election.Elector = (*Elector)(nil)

// New reads the variable and decides whether this node leads. A value that
// is not one of the accepted words is an error naming the variable and the
// value, so a typo never silently makes a follower (or a leader).
func New(cfg Config) (*Elector, error) {
	if cfg.Var == "" {
		cfg.Var = DefaultVar
	}
	if strings.ContainsAny(cfg.Var, "= \t\n\x00") {
		return nil, fmt.Errorf("env: variable name %q is not a valid environment variable name", cfg.Var)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = os.LookupEnv
	}
	if cfg.Hostname == nil {
		cfg.Hostname = os.Hostname
	}
	nodeID := strings.TrimSpace(cfg.NodeID)
	if nodeID == "" {
		h, err := cfg.Hostname()
		if err != nil {
			return nil, fmt.Errorf("env: hostname: %w (set a node id)", err)
		}
		if nodeID = strings.TrimSuffix(strings.TrimSpace(h), "."); nodeID == "" {
			return nil, errors.New("env: hostname is empty (set a node id)")
		}
	}
	value, set := cfg.LookupEnv(cfg.Var)
	leads, err := parseFlag(cfg.Var, value, set)
	if err != nil {
		return nil, err
	}
	return &Elector{nodeID: nodeID, varName: cfg.Var, value: value, set: set, leads: leads, log: cfg.Logger}, nil
}

// Leads reports whether the variable says this node leads.
func (e *Elector) Leads() bool { return e.leads }

// Reason says in words which variable and value decided.
func (e *Elector) Reason() string {
	if !e.set {
		return e.varName + " is unset"
	}
	return fmt.Sprintf("%s=%q", e.varName, e.value)
}

// Joined reports whether Run has reported this node's role. An env
// follower never knows who leads, so "knows a leader" cannot tell
// readiness; this can.
func (e *Elector) Joined() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.joined
}

// Run reports the decision through cb (a leader: OnNewLeader(self) then
// OnStartedLeading(ctx, 1); a follower: nothing, since it knows no
// leader), blocks until ctx is done, then steps down and returns nil.
func (e *Elector) Run(ctx context.Context, cb election.Callbacks) error {
	n := election.NewNotifier(ctx, cb, e.idle())
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return errors.New("env: Run called twice")
	}
	e.started, e.n = true, n
	e.mu.Unlock()

	s := election.Status{Node: e.nodeID, Role: election.Follower, Term: term, Since: time.Now()}
	if e.leads {
		e.log.Info("env: this node leads", "reason", e.Reason(), "term", term)
		s.Role, s.Leader = election.Leader, election.LeaderInfo{ID: e.nodeID, Term: term}
	} else {
		e.log.Info("env: this node follows", "reason", e.Reason())
	}
	n.Update(s)
	e.mu.Lock()
	e.joined = true
	e.mu.Unlock()

	<-ctx.Done()
	final := n.Status()
	if final.Role == election.Leader {
		e.log.Info("env: stepping down", "term", term)
		final = election.Status{Node: e.nodeID, Role: election.Follower, Term: term, Since: time.Now()}
	}
	n.Stop(final)
	return nil
}

// Status returns this node's view: before Run a follower with term 0,
// during Run the decision, after Run a follower that knows no leader.
func (e *Elector) Status() election.Status {
	e.mu.Lock()
	n := e.n
	e.mu.Unlock()
	if n == nil {
		return e.idle()
	}
	return n.Status()
}

func (e *Elector) idle() election.Status {
	return election.Status{Node: e.nodeID, Role: election.Follower}
}
