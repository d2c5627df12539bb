package cli

import (
	"github.com/spf13/pflag"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/static"
	"github.com/lanleader/lanleader/jobs"
)

// staticMode: the leader is the node whose hostname (or address) matches
// --leader.
func staticMode() Mode {
	return Mode{
		Name:    "static",
		Summary: "the node named by --leader leads; no network traffic",
		Keys:    []string{"leader"},
		Setup: func(fs *pflag.FlagSet) ModeSettings {
			s := &staticSettings{}
			fs.StringVar(&s.Leader, "leader", "", "static mode: hostname, FQDN or IP of the node that leads")
			return s
		},
	}
}

type staticSettings struct {
	Leader string
}

func (s *staticSettings) Load(src *Source) error {
	if src.File != nil && src.File.Election.Leader != "" && !src.Changed("leader") {
		s.Leader = src.File.Election.Leader
	}
	if s.Leader == "" {
		return src.Problem("leader", "leader", "required in static mode: the hostname, FQDN or IP of the node that leads")
	}
	return nil
}

// Succession: static mode coordinates nothing between nodes.
func (s *staticSettings) Succession() election.Succession { return election.Succession{} }

func (s *staticSettings) New(env Env) (*Elector, error) {
	e, err := static.New(static.Config{NodeID: env.NodeID, Leader: s.Leader, Logger: env.Logger})
	if err != nil {
		return nil, ConfigError{err}
	}
	return &Elector{Elector: e, Cluster: jobs.Alone(e)}, nil
}
