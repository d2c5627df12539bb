package static

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/lanleader/lanleader/election"
)

// term is the only term a static cluster ever has: its leader never changes
// while the processes run.
const term = 1

// Elector is the static election mode. Create it with New.
type Elector struct {
	*election.Fixed
	leader   string
	decision decision
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
	why := []any{"leader", leader, "compared", d.compared}
	if d.leads {
		why = []any{"leader", leader, "matched", d.matched}
	}
	fixed := election.NewFixed(election.FixedConfig{
		Mode: "static", Node: nodeID, Leads: d.leads, Term: term, Logger: cfg.Logger, Why: why,
		Leader: election.LeaderInfo{ID: leader, Term: term},
	})
	return &Elector{Fixed: fixed, leader: leader, decision: d}, nil
}

// Leads reports whether this node is the configured leader.
func (e *Elector) Leads() bool { return e.decision.leads }

// Reason says in words why this node leads (which name or address matched)
// or why not (what the leader name was compared with).
func (e *Elector) Reason() string { return e.decision.reason(e.leader) }
