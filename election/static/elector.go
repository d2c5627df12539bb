package static

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

// term is the only term a static cluster ever has: its leader never changes
// while the processes run.
const term = 1

// Elector is the static election mode. Create it with New.
type Elector struct {
	nodeID   string
	leader   string
	decision decision
	log      *slog.Logger

	mu      sync.Mutex
	started bool
	// joined is set once Run has reported the role.
	joined bool
	// n reports and holds the status once Run has started; nil before.
	n *election.Notifier
}

var _ election.Elector = (*Elector)(nil)

// New decides whether this node leads by comparing cfg.Leader with its
// names and addresses (see Config). The decision is final for the life of
// the Elector; Run reports it. Errors name the offending value: a missing
// or malformed Leader, or a lookup that failed where it was needed.
func New(cfg Config) (*Elector, error) {
	leader := normalizeName(cfg.Leader)
	leaderIP, err := validateLeader(leader)
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Hostname == nil {
		cfg.Hostname = os.Hostname
	}
	if cfg.FQDN == nil {
		cfg.FQDN = lookupFQDN
	}
	if cfg.InterfaceAddrs == nil {
		cfg.InterfaceAddrs = interfaceAddrs
	}
	cfg.NodeID = normalizeName(cfg.NodeID)

	// A node id equal to the hostname (as the CLI passes by default) is
	// no override: the FQDN still counts.
	h, herr := cfg.Hostname()
	host := normalizeName(h)
	if herr != nil {
		host = ""
	}
	nodeID := cfg.NodeID
	switch {
	case nodeID == "" && herr != nil:
		return nil, fmt.Errorf("static: hostname: %w (set a node id)", herr)
	case nodeID == "" && host == "":
		return nil, errors.New("static: hostname is empty (set a node id)")
	case nodeID == "":
		nodeID = host
	}
	if !strings.EqualFold(nodeID, host) {
		host = "" // overridden
	}
	d, err := decide(context.Background(), cfg, leader, leaderIP, nodeID, host)
	if err != nil {
		return nil, err
	}
	return &Elector{nodeID: nodeID, leader: leader, decision: d, log: cfg.Logger}, nil
}

// Leads reports whether this node is the configured leader.
func (e *Elector) Leads() bool { return e.decision.leads }

// Reason says in words why this node leads (which name or address matched)
// or why not (what the leader name was compared with).
func (e *Elector) Reason() string { return e.decision.reason(e.leader) }

// Run reports the decision through cb (a leader: OnNewLeader(self) then
// OnStartedLeading(ctx, 1); a follower: OnNewLeader of the configured
// leader), blocks until ctx is done, then steps down and returns nil.
func (e *Elector) Run(ctx context.Context, cb election.Callbacks) error {
	n := election.NewNotifier(ctx, cb, e.idle())
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return errors.New("static: Run called twice")
	}
	e.started, e.n = true, n
	e.mu.Unlock()

	now := time.Now()
	if e.decision.leads {
		e.log.Info("static: this node leads", "leader", e.leader,
			"matched", e.decision.matched, "term", term)
		n.Update(election.Status{
			Node: e.nodeID, Role: election.Leader, Term: term, Since: now,
			Leader: election.LeaderInfo{ID: e.nodeID, Term: term},
		})
	} else {
		e.log.Info("static: this node follows", "leader", e.leader,
			"compared", e.decision.compared)
		n.Update(election.Status{
			Node: e.nodeID, Role: election.Follower, Term: term, Since: now,
			Leader: election.LeaderInfo{ID: e.leader, Term: term},
		})
	}

	e.mu.Lock()
	e.joined = true
	e.mu.Unlock()

	<-ctx.Done()
	final := n.Status()
	if final.Role == election.Leader {
		e.log.Info("static: stepping down", "term", term)
		final = election.Status{Node: e.nodeID, Role: election.Follower, Term: term, Since: time.Now()}
	}
	n.Stop(final)
	return nil
}

// Joined reports whether Run has reported this node's role (readiness).
func (e *Elector) Joined() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.joined
}

// Status returns this node's view: before Run a follower that knows no
// leader, during Run the decision, after Run a follower (a leader has
// stepped down and knows no leader).
func (e *Elector) Status() election.Status {
	e.mu.Lock()
	n := e.n
	e.mu.Unlock()
	if n == nil {
		return e.idle()
	}
	return n.Status()
}

// idle is the status before Run: nothing has been reported yet.
func (e *Elector) idle() election.Status {
	return election.Status{Node: e.nodeID, Role: election.Follower}
}
