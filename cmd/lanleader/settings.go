package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lanleader/lanleader/config"
	"github.com/lanleader/lanleader/election/env"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/httpapi"
)

// settings are the election and process settings of `lanleader run`: the
// config file's election: section, overridden by any flag given explicitly.
type settings struct {
	ConfigPath string
	Mode       string
	NodeID     string
	Leader     string
	EnvVar     string
	Cluster    string
	Bind       string
	Port       int
	Peers      []string
	Priority   int
	Interval   time.Duration
	Misses     int
	Preempt    bool
	// ClusterSize > 0 turns on quorum mode.
	ClusterSize int
	SecretFile  string
	HTTP        string
	LogFormat   string
	LogLevel    string
}

// defaultSettings are used for anything neither the file nor a flag sets.
func defaultSettings() settings {
	pc := protocol.DefaultLANConfig()
	return settings{
		Mode:      "udp",
		EnvVar:    env.DefaultVar,
		Cluster:   pc.Cluster,
		Bind:      udp.DefaultBind,
		Port:      udp.DefaultPort,
		Priority:  int(pc.Priority),
		Interval:  pc.Interval,
		Misses:    pc.Misses,
		HTTP:      httpapi.DefaultAddr,
		LogFormat: "text",
		LogLevel:  "info",
	}
}

// peerList is a comma-separated --peers value.
type peerList []string

func (p *peerList) String() string { return strings.Join(*p, ",") }
func (p *peerList) Set(v string) error {
	*p = nil
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*p = append(*p, s)
		}
	}
	return nil
}

// electionFlags registers the flags shared by run (and, in part, who) on fs,
// writing into s.
func electionFlags(fs *flag.FlagSet, s *settings) {
	fs.StringVar(&s.Mode, "mode", s.Mode, "election mode: static, env or udp")
	fs.StringVar(&s.NodeID, "node-id", s.NodeID, "this node's id (default: hostname)")
	fs.StringVar(&s.Leader, "leader", s.Leader, "static mode: hostname, FQDN or IP of the node that leads")
	fs.StringVar(&s.EnvVar, "env-var", s.EnvVar, "env mode: variable that says whether this node leads")
	fs.StringVar(&s.Cluster, "cluster", s.Cluster, "udp mode: cluster name; clusters on one LAN ignore each other")
	fs.StringVar(&s.Bind, "bind", s.Bind, "udp mode: IPv4 address or go-sockaddr template resolving to exactly one")
	fs.IntVar(&s.Port, "port", s.Port, "udp mode: UDP port, the same on every node")
	fs.Var((*peerList)(&s.Peers), "peers", "udp mode: comma-separated host:port list; unicast instead of broadcast")
	fs.IntVar(&s.Priority, "priority", s.Priority, "udp mode: 0-255, higher wins ties and claims sooner")
	fs.DurationVar(&s.Interval, "interval", s.Interval, "udp mode: heartbeat interval")
	fs.IntVar(&s.Misses, "misses", s.Misses, "udp mode: silent intervals before a follower suspects the leader")
	fs.BoolVar(&s.Preempt, "preempt", s.Preempt, "udp mode: a higher-priority node takes over from a sitting leader")
	fs.IntVar(&s.ClusterSize, "cluster-size", s.ClusterSize, "udp mode: number of nodes; > 0 turns on quorum mode (a leader needs a majority)")
	fs.StringVar(&s.SecretFile, "secret-file", s.SecretFile, "udp mode: file of HMAC keys (first signs, all verify)")
}

// mergeFile applies the config file's election: section to s, except for the
// flags the user set explicitly (set), which win.
func mergeFile(s *settings, e config.Election, set map[string]bool) {
	str := func(flag string, dst *string, v string) {
		if v != "" && !set[flag] {
			*dst = v
		}
	}
	str("mode", &s.Mode, e.Mode)
	str("node-id", &s.NodeID, e.NodeID)
	str("leader", &s.Leader, e.Leader)
	str("env-var", &s.EnvVar, e.EnvVar)
	str("cluster", &s.Cluster, e.Cluster)
	str("bind", &s.Bind, e.Bind)
	str("secret-file", &s.SecretFile, e.SecretFile)
	if e.Port != 0 && !set["port"] {
		s.Port = e.Port
	}
	if len(e.Peers) > 0 && !set["peers"] {
		s.Peers = e.Peers
	}
	if e.Priority != nil && !set["priority"] {
		s.Priority = *e.Priority
	}
	if e.Interval != 0 && !set["interval"] {
		s.Interval = e.Interval
	}
	if e.Misses != 0 && !set["misses"] {
		s.Misses = e.Misses
	}
	if e.ClusterSize != 0 && !set["cluster-size"] {
		s.ClusterSize = e.ClusterSize
	}
	if e.Preempt != nil && !set["preempt"] {
		s.Preempt = *e.Preempt
	}
	if e.HTTP != nil && !set["http"] {
		s.HTTP = *e.HTTP
	}
}

// settingError is an invalid setting, named by its config key (under
// election:) and its flag, which share a name but for _ and -.
type settingError struct {
	key string // e.g. "priority"
	msg string
}

func (e settingError) Error() string { return e.msg }

// describe places err for the user: at the flag if one was given, else at
// the file line that set the key, else just the flag (a default was bad).
func describe(err error, file *config.File, set map[string]bool) error {
	se, ok := err.(settingError)
	if !ok {
		return err
	}
	flagName := strings.ReplaceAll(se.key, "_", "-")
	if set[flagName] || file == nil {
		return fmt.Errorf("--%s: %s", flagName, se.msg)
	}
	key := "election." + se.key
	return fmt.Errorf("%s: %s (or --%s): %s", file.Where(key), key, flagName, se.msg)
}

// validate checks the settings' values and relationships.
func (s *settings) validate() error {
	bad := func(key, format string, args ...any) error {
		return settingError{key: key, msg: fmt.Sprintf(format, args...)}
	}
	switch s.Mode {
	case "static":
		if s.Leader == "" {
			return bad("leader", "required in static mode: the hostname, FQDN or IP of the node that leads")
		}
	case "env", "udp":
	default:
		return bad("mode", "%q: want static, env or udp", s.Mode)
	}
	if s.Port < 1 || s.Port > 65535 {
		return bad("port", "%d: want 1-65535", s.Port)
	}
	if s.Priority < 0 || s.Priority > 255 {
		return bad("priority", "%d: want 0-255", s.Priority)
	}
	if s.Interval <= 0 {
		return bad("interval", "%v: must be positive", s.Interval)
	}
	if s.Misses < 1 {
		return bad("misses", "%d: must be at least 1", s.Misses)
	}
	if s.ClusterSize < 0 || s.ClusterSize > 255 {
		return bad("cluster_size", "%d: want 0 (no quorum) or 1-255", s.ClusterSize)
	}
	if s.NodeID == "" {
		h, err := os.Hostname()
		if err != nil {
			return bad("node_id", "not set and the hostname is unknown: %v", err)
		}
		s.NodeID = h
	}
	return nil
}
