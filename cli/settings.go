package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lanleader/lanleader/config"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
)

// DefaultConfigPath is where run, check-config, status and who look for
// the config file when --config is not given.
const DefaultConfigPath = "/etc/lanleader/lanleader.yaml"

// commonElectionKeys are the keys under election: that belong to lanleader
// itself rather than to a mode.
var commonElectionKeys = []string{"mode", "node_id", "http", "http_hosts", "http_output_tails", "state_dir"}

// settings are the settings of `lanleader run` that every mode shares: the
// config file's election: section, overridden by any flag given
// explicitly. Each mode keeps its own (ModeSettings).
type settings struct {
	ConfigPath string
	Mode       string
	NodeID     string
	HTTP       string
	LogFormat  string
	LogLevel   string
	// StopGrace bounds how long run waits at stop for on_leader_loss:
	// finish runs (before it leaves the election) and for the on_stop hook
	// (after) before it kills them. The systemd unit's TimeoutStopSec must be above it.
	StopGrace time.Duration
	// StateDir holds the state file (internal/statefile); "" means none.
	// The default, DefaultStateDir, is used only if it exists and is
	// writable (StateDirSet false).
	StateDir    string
	StateDirSet bool
	// HTTPHosts are the names the status endpoint answers to besides
	// localhost and IP addresses (httpapi.Config.Hosts).
	HTTPHosts []string
	// HTTPOutputTails serves output tails beyond loopback
	// (httpapi.Config.OutputTails).
	HTTPOutputTails bool
}

// DefaultStateDir is where run keeps its state file when --state-dir
// (election.state_dir) is not given and the directory exists and is
// writable (the packaged systemd unit creates it: StateDirectory=).
const DefaultStateDir = "/var/lib/lanleader"

// defaultSettings are used for anything neither the file nor a flag sets.
func defaultSettings() settings {
	return settings{
		Mode:      "udp",
		HTTP:      httpapi.DefaultAddr,
		LogFormat: "text",
		LogLevel:  "info",
		StopGrace: 30 * time.Second,
		StateDir:  DefaultStateDir,
	}
}

// commonFlags registers the shared election flags on fs.
func commonFlags(fs *pflag.FlagSet, s *settings, modes []Mode) {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = m.Name
	}
	fs.StringVar(&s.Mode, "mode", s.Mode, "election mode: "+orList(names))
	fs.StringVar(&s.NodeID, "node-id", s.NodeID, "this node's id, unique in the cluster: 1-64 bytes of printable UTF-8 without whitespace (default: hostname)")
	fs.StringVar(&s.HTTP, "http", s.HTTP, "status and metrics endpoint address; empty turns it off")
	fs.StringSliceVar(&s.HTTPHosts, "http-hosts", nil, "names of this node the status endpoint answers to in the Host header, besides localhost and IP addresses (others are refused: DNS rebinding)")
	fs.BoolVar(&s.HTTPOutputTails, "http-output-tails", false, "serve runs' output tails on a status endpoint bound beyond loopback (they may hold secrets a job printed)")
	fs.StringVar(&s.StateDir, "state-dir", s.StateDir, "directory of this node's state files, kept across restarts (state: terms, job ledger, run history; replay: the replay table); empty turns them off; the default is used only if it exists and is writable")
}

// merge applies the common keys of the file's election: section to s,
// except where a flag was given (src.Changed).
func (s *settings) merge(src *Source) {
	s.StateDirSet = src.Changed("state-dir")
	if src.File == nil {
		return
	}
	e := src.File.Election
	if e.Mode != "" && !src.Changed("mode") {
		s.Mode = e.Mode
	}
	if e.NodeID != "" && !src.Changed("node-id") {
		s.NodeID = e.NodeID
	}
	if e.HTTP != nil && !src.Changed("http") {
		s.HTTP = *e.HTTP
	}
	if e.HTTPHosts != nil && !src.Changed("http-hosts") {
		s.HTTPHosts = e.HTTPHosts
	}
	if e.HTTPOutputTails != nil && !src.Changed("http-output-tails") {
		s.HTTPOutputTails = *e.HTTPOutputTails
	}
	if e.StateDir != nil && !src.Changed("state-dir") {
		s.StateDir = *e.StateDir
	}
	s.StateDirSet = s.StateDirSet || e.StateDir != nil
	if l := src.File.Log; l.Level != "" && !src.Changed("log-level") {
		s.LogLevel = l.Level
	}
	if l := src.File.Log; l.Format != "" && !src.Changed("log-format") {
		s.LogFormat = l.Format
	}
}

// validate checks the common settings and fills the node id from the
// hostname if unset.
func (s *settings) validate(src *Source, modes []Mode) error {
	if findMode(modes, s.Mode) == nil {
		names := make([]string, len(modes))
		for i, m := range modes {
			names[i] = m.Name
		}
		return src.Problem("mode", "mode", "%q: want %s", s.Mode, orList(names))
	}
	if s.StopGrace <= 0 {
		return fmt.Errorf("--stop-grace %v: must be positive", s.StopGrace)
	}
	if s.NodeID == "" {
		h, err := os.Hostname()
		if err != nil {
			return src.Problem("node_id", "node-id", "not set and the hostname is unknown: %v", err)
		}
		if err := election.CheckNodeID(h); err != nil {
			return src.Problem("node_id", "node-id", "not set, and the hostname %q is no node id: %v", h, err)
		}
		s.NodeID = h
	}
	// One rule for every mode: the id goes on the wire, into etcd, logs,
	// metrics and jobs' environment.
	if err := election.CheckNodeID(s.NodeID); err != nil {
		return src.Problem("node_id", "node-id", "%q: %v", s.NodeID, err)
	}
	return nil
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func findMode(modes []Mode, name string) *Mode {
	for i := range modes {
		if modes[i].Name == name {
			return &modes[i]
		}
	}
	return nil
}

// Source is where a mode's settings come from: the config file, if any,
// and the flags given explicitly on the command line.
type Source struct {
	// File is the loaded config file; nil when the command has none.
	File *config.File
	// NodeID is this node's id, already resolved (flag, file or hostname).
	NodeID string
	flags  *pflag.FlagSet
	// warnings are problems that do not stop a start (Warn).
	warnings []string
	// checkOnly are warnings that check-config prints but run does not
	// log at start, because run logs the same itself as it acts on it
	// (warnCheckOnly).
	checkOnly []string
}

// Warn records a problem that does not stop a start but that the user
// should see: check-config prints it, run logs it at WARN. Say what holds
// and what to check.
func (s *Source) Warn(format string, args ...any) {
	s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
}

// warnCheckOnly records a warning for check-config alone: run's own log
// line about the same thing (e.g. waiting for the bind address) would
// otherwise follow it at once.
func (s *Source) warnCheckOnly(format string, args ...any) {
	s.checkOnly = append(s.checkOnly, fmt.Sprintf(format, args...))
}

// InFile reports whether election.KEY was written in the file (even as 0).
func (s *Source) InFile(key string) bool {
	return s.File != nil && s.File.Has("election."+key)
}

// Changed reports whether the flag named name was given explicitly; such
// a flag wins over the file.
func (s *Source) Changed(name string) bool {
	if s.flags == nil {
		return false
	}
	f := s.flags.Lookup(name)
	return f != nil && f.Changed
}

// Decode decodes election.KEY of the file into into (see
// config.File.DecodeElection); it reports false if the key is absent.
func (s *Source) Decode(key string, into any) (bool, error) {
	if s.File == nil {
		return false, nil
	}
	return s.File.DecodeElection(key, into)
}

// Problem makes an invalid-setting error placed for the user: at the flag
// if it was given (or there is no file), else at the file line that set
// election.KEY, else at the file (a default was wrong). key is the path
// under election: ("priority", "etcd.endpoints"); flag may be empty.
func (s *Source) Problem(key, flag, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if flag != "" && (s.Changed(flag) || s.File == nil) {
		return fmt.Errorf("--%s: %s", flag, msg)
	}
	if s.File == nil {
		return fmt.Errorf("election.%s: %s", key, msg)
	}
	full := "election." + key
	if flag == "" {
		return fmt.Errorf("%s: %s: %s", s.File.Where(full), full, msg)
	}
	return fmt.Errorf("%s: %s (or --%s): %s", s.File.Where(full), full, flag, msg)
}
