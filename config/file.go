package config

import (
	"fmt"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lanleader/lanleader/hooks"
	"github.com/lanleader/lanleader/jobs"
)

// File is a decoded, validated config file.
type File struct {
	// Path is the name the file was loaded under, as used in errors.
	Path string
	// Election holds the election: settings; zero fields were not set.
	Election Election
	// Jobs are the jobs, validated (schedules parse, names unique).
	Jobs []jobs.Spec
	// Services are the leader-only services, validated (names unique).
	Services []jobs.ServiceSpec
	// Hooks are the notify hooks; zero Commands are not set.
	Hooks hooks.Config
	// Log is the log: section; empty fields were not set.
	Log Log

	// ElectionExtra holds the values of the keys under election: that
	// Options.ElectionKeys allowed, undecoded: the mode that claimed a key
	// decodes it (DecodeElection).
	ElectionExtra map[string]*yaml.Node

	// Reads is how many reads it took until two agreed (see SettleGap): 2
	// when the file did not change while it was read.
	Reads int

	// lines maps key paths ("election.priority", "jobs[1].schedule") to
	// the line of their value.
	lines map[string]int
}

// Election is the election: section. Fields left zero (nil for pointers)
// were not in the file; the CLI fills them from flags or defaults.
type Election struct {
	Mode       string        // static | env | udp
	NodeID     string        // this node's id (default: hostname)
	Leader     string        // static mode: the leader's name or address
	EnvVar     string        // env mode: the variable to read
	Cluster    string        // udp mode: cluster name
	Bind       string        // udp mode: address or go-sockaddr template
	Transport  string        // udp mode: broadcast | multicast | unicast
	Group      string        // udp mode: multicast group
	Port       int           // udp mode: UDP port
	Peers      []string      // udp mode: unicast peers instead of broadcast
	Priority   *int          // udp mode: higher wins ties
	Interval   time.Duration // udp mode: heartbeat interval
	Misses     int           // udp mode: missed heartbeats before suspicion
	Preempt    *bool         // udp mode: a better node takes over
	SecretFile string        // udp mode: file with the HMAC key
	HTTP       *string       // status endpoint address; "" turns it off
	StateDir   *string       // directory of the state file; "" turns it off
	// ClusterSize turns on quorum mode (udp): the number of voters,
	// witnesses included; a leader needs a majority of them. 0: not set.
	ClusterSize int
	// Quorum (udp) is "auto" (on when the voters are known and at least
	// 3), "on" or "off"; "" when not set. A YAML true or false reads as
	// on or off.
	Quorum string
	// Role (udp) is "node" or "witness" (votes, never leads); "" when not
	// set.
	Role string
	// HTTPHosts are further names the status endpoint answers to in the
	// Host header.
	HTTPHosts []string
	// HTTPOutputTails serves runs' output tails on a status endpoint
	// bound beyond loopback.
	HTTPOutputTails *bool
}

// Log is the log: section: the logger's level (debug, info, warn, error)
// and format (text, json). The CLI checks the values; flags win.
type Log struct {
	Level  string
	Format string
}

// Load reads and decodes the config file at path. Errors name path, the
// line, the key and the reason; several problems are reported together,
// one per line. On error the File is nil.
func Load(path string) (*File, error) {
	return noPartial(LoadWith(path, Options{}))
}

// Options extend what a config file may contain.
type Options struct {
	// ElectionKeys are further keys allowed under election:, for election
	// modes built outside this module. Their values are kept undecoded in
	// File.ElectionExtra.
	ElectionKeys []string
	// ReadFile reads the file; nil means os.ReadFile. Tests give a file
	// that changes between reads.
	ReadFile func(name string) ([]byte, error)
}

// LoadWith is Load with further keys allowed (see Options). Like
// ParseWith, it returns what decoded together with an error. It reads the
// file until two reads agree (see SettleGap), so a file being written is
// not taken half-written.
func LoadWith(path string, o Options) (*File, error) {
	read := o.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	data, reads, err := readSettled(path, read)
	if err != nil {
		return nil, err // *fs.PathError: "open PATH: reason", or still changing
	}
	f, err := ParseWith(path, data, o)
	if f != nil {
		f.Reads = reads
	}
	return f, err
}

func newFile(name string) *File {
	return &File{Path: name, lines: map[string]int{}, ElectionExtra: map[string]*yaml.Node{}}
}

// Has reports whether key (a path such as "election.port") was in the
// file, so that a value written as 0 can be told from one left out. A
// value with an error (reported by Load) counts as left out.
func (f *File) Has(key string) bool {
	_, ok := f.lines[key]
	return ok
}

// Where returns "file:line" for the value of key (a path such as
// "election.priority" or "jobs[0].timeout"), or just the file name if key
// was not in the file, so the CLI's own errors can point at the line too.
func (f *File) Where(key string) string {
	if l, ok := f.lines[key]; ok {
		return fmt.Sprintf("%s:%d", f.Path, l)
	}
	return f.Path
}
