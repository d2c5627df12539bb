package env

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/lanleader/lanleader/election"
)

// term is the only term an env cluster has: the variable is read once.
const term = 1

// Elector is the env election mode. Create it with New.
type Elector struct {
	*election.Fixed
	varName string
	value   string
	set     bool
	leads   bool
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
	e := &Elector{varName: cfg.Var, value: value, set: set, leads: leads}
	// A follower cannot know who leads: the leader is another process's
	// environment.
	e.Fixed = election.NewFixed(election.FixedConfig{
		Mode: "env", Node: nodeID, Leads: leads, Term: term, Logger: cfg.Logger,
		Why: []any{"reason", e.Reason()},
	})
	return e, nil
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
