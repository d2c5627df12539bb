package env

import "log/slog"

// DefaultVar is the environment variable read when Config.Var is empty.
const DefaultVar = "LANLEADER_LEADER"

// Config configures an env Elector.
type Config struct {
	// NodeID is this node's id. Default: os.Hostname.
	NodeID string
	// Var is the environment variable that says whether this node leads.
	// true, 1 or yes (any case) lead; false, 0, no, empty or unset follow;
	// anything else is an error from New. Default: DefaultVar.
	Var string
	// Logger receives the decision. Nil means slog.Default(). Records
	// carry no node attribute: add one with Logger.With.
	Logger *slog.Logger

	// LookupEnv reads the environment. Nil means os.LookupEnv.
	LookupEnv func(key string) (string, bool)
	// Hostname returns this machine's hostname, used when NodeID is empty.
	// Nil means os.Hostname.
	Hostname func() (string, error)
}
