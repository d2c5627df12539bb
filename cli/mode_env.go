package cli

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/env"
	"github.com/lanleader/lanleader/jobs"
)

// envMode: an orchestrator says through an environment variable whether
// this node leads.
func envMode() Mode {
	return Mode{
		Name:    "env",
		Summary: "an environment variable set by an orchestrator says whether this node leads",
		Keys:    []string{"env_var"},
		Setup: func(fs *pflag.FlagSet) ModeSettings {
			s := &envSettings{Var: env.DefaultVar}
			fs.StringVar(&s.Var, "env-var", s.Var, "env mode: variable that says whether this node leads")
			return s
		},
	}
}

type envSettings struct {
	Var string
}

func (s *envSettings) Load(src *Source) error {
	if src.File != nil && src.File.Election.EnvVar != "" && !src.Changed("env-var") {
		s.Var = src.File.Election.EnvVar
	}
	if strings.TrimSpace(s.Var) == "" {
		return src.Problem("env_var", "env-var", "empty: name the variable that says whether this node leads (default %s)", env.DefaultVar)
	}
	return nil
}

// Succession: env mode coordinates nothing between nodes.
func (s *envSettings) Succession() election.Succession { return election.Succession{} }

func (s *envSettings) New(e Env) (*Elector, error) {
	el, err := env.New(env.Config{NodeID: e.NodeID, Var: s.Var, Logger: e.Logger})
	if err != nil {
		return nil, ConfigError{errors.New(strings.TrimPrefix(err.Error(), "env: "))}
	}
	return &Elector{Elector: el, Cluster: jobs.Alone(el)}, nil
}
