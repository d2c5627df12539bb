package cli

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
	"github.com/lanleader/lanleader/metrics"
)

// udpMode: the nodes elect a leader among themselves with broadcast (or
// unicast) UDP claims and heartbeats.
func udpMode() Mode {
	return Mode{
		Name:    "udp",
		Summary: "the nodes elect a leader over the LAN (UDP broadcast or --peers)",
		Keys: []string{"cluster", "bind", "port", "peers", "priority", "interval", "misses",
			"preempt", "cluster_size", "secret_file"},
		Setup: func(fs *pflag.FlagSet) ModeSettings {
			s := defaultUDPSettings()
			s.flags(fs)
			return s
		},
	}
}

// udpSettings are the udp mode's settings.
type udpSettings struct {
	Cluster  string
	Bind     string
	Port     int
	Peers    []string
	Priority int
	Interval time.Duration
	Misses   int
	Preempt  bool
	// ClusterSize > 0 turns on quorum mode.
	ClusterSize int
	SecretFile  string
}

func defaultUDPSettings() *udpSettings {
	pc := protocol.DefaultLANConfig()
	return &udpSettings{
		Cluster:  pc.Cluster,
		Bind:     udp.DefaultBind,
		Port:     udp.DefaultPort,
		Priority: int(pc.Priority),
		Interval: pc.Interval,
		Misses:   pc.Misses,
	}
}

// peerList is a comma-separated --peers value.
type peerList []string

func (p *peerList) String() string { return strings.Join(*p, ",") }
func (p *peerList) Type() string   { return "host:port,..." }
func (p *peerList) Set(v string) error {
	*p = nil
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*p = append(*p, s)
		}
	}
	return nil
}

func (s *udpSettings) flags(fs *pflag.FlagSet) {
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

// merge applies the file's udp keys, except where a flag was given.
func (s *udpSettings) merge(src *Source) {
	if src.File == nil {
		return
	}
	e := src.File.Election
	str := func(flag string, dst *string, v string) {
		if v != "" && !src.Changed(flag) {
			*dst = v
		}
	}
	str("cluster", &s.Cluster, e.Cluster)
	str("bind", &s.Bind, e.Bind)
	str("secret-file", &s.SecretFile, e.SecretFile)
	if e.Port != 0 && !src.Changed("port") {
		s.Port = e.Port
	}
	if len(e.Peers) > 0 && !src.Changed("peers") {
		s.Peers = e.Peers
	}
	if e.Priority != nil && !src.Changed("priority") {
		s.Priority = *e.Priority
	}
	if e.Interval != 0 && !src.Changed("interval") {
		s.Interval = e.Interval
	}
	if e.Misses != 0 && !src.Changed("misses") {
		s.Misses = e.Misses
	}
	if e.ClusterSize != 0 && !src.Changed("cluster-size") {
		s.ClusterSize = e.ClusterSize
	}
	if e.Preempt != nil && !src.Changed("preempt") {
		s.Preempt = *e.Preempt
	}
}

func (s *udpSettings) Load(src *Source) error {
	s.merge(src)
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, src.Problem(key, strings.ReplaceAll(key, "_", "-"), format, args...))
	}
	if s.Port < 1 || s.Port > 65535 {
		bad("port", "%d: want 1-65535", s.Port)
	}
	if s.Priority < 0 || s.Priority > 255 {
		bad("priority", "%d: want 0-255", s.Priority)
	}
	if s.Interval <= 0 {
		bad("interval", "%v: must be positive", s.Interval)
	}
	if s.Misses < 1 {
		bad("misses", "%d: must be at least 1", s.Misses)
	}
	if s.ClusterSize < 0 || s.ClusterSize > 255 {
		bad("cluster_size", "%d: want 0 (no quorum) or 1-255", s.ClusterSize)
	}
	return errors.Join(errs...)
}

func (s *udpSettings) New(env Env) (*Elector, error) {
	logger := env.Logger
	pc := protocol.DefaultLANConfig()
	pc.NodeID = env.NodeID
	pc.Cluster = s.Cluster
	pc.Priority = uint8(s.Priority)
	pc.Interval = s.Interval
	pc.Misses = s.Misses
	pc.MaxMisses = max(pc.MaxMisses, s.Misses)
	pc.Preempt = s.Preempt
	// BackoffMax, ClaimWindow and the other timings derive from Interval
	// in protocol.Config.Timings.
	pc.ClusterSize = s.ClusterSize
	pc.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(pc.Rand.Uint32()))
	if err := pc.Validate(); err != nil {
		return nil, ConfigError{err}
	}
	var keyring *wire.Keyring
	if s.SecretFile != "" {
		k, err := wire.LoadKeyring(s.SecretFile)
		if err != nil {
			return nil, ConfigError{fmt.Errorf("--secret-file (election.secret_file): %w", err)}
		}
		keyring = k
	} else {
		logger.Warn("no --secret-file: packets are not authenticated; anyone on the LAN can claim leadership")
	}
	broadcast := len(s.Peers) == 0
	bind, err := udp.ResolveBind(s.Bind, broadcast)
	if err != nil {
		return nil, ConfigError{fmt.Errorf("--bind (election.bind): %w", err)}
	}
	pc.Addr = fmt.Sprintf("%s:%d", bind.Addr, s.Port)

	t, err := udp.NewUDPTransport(udp.UDPConfig{
		Bind:   bind.Addr.String(),
		Port:   s.Port,
		Peers:  s.Peers,
		Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	e, err := udp.New(udp.Config{
		Protocol:  pc,
		Transport: t,
		Keyring:   keyring,
		Logger:    logger,
		Payload:   env.Ledger,
		OnPayload: func(_ string, _ uint64, p []byte) { env.AdoptLedger(p) },
		OnPacket:  env.Metrics.PacketReceived,
		// Hearing nobody is worth a WARN when others are expected.
		ExpectPeers: len(s.Peers) > 0 || s.ClusterSize > 0,
	})
	if err != nil {
		t.Close()
		return nil, ConfigError{err}
	}
	if env.Metrics != nil {
		env.Metrics.WatchHearing(func() metrics.Hearing {
			h := e.Hearing()
			return metrics.Hearing{Isolated: h.Isolated, Deaf: h.Deaf, RivalLeader: h.Rival.ID != "",
				DeafPeers: len(h.DeafPeers), DuplicateID: h.Duplicate.Incarnation != 0, SignedUnchecked: e.SignedUnchecked()}
		})
	}
	logger.Info("udp election", "addr", pc.Addr, "broadcast", bind.Broadcast, "interface", bind.Interface,
		"peers", s.Peers, "cluster", s.Cluster, "priority", s.Priority, "interval", s.Interval,
		"misses", s.Misses, "quorum", s.ClusterSize, "authenticated", keyring != nil)
	return &Elector{
		Elector: e,
		CanRun:  e.CanActAsLeader,
		Publish: e.Publish,
		View: func() any {
			v := newUDPView(e.Stats(), e.Quorum(), t.Stats())
			v.Hearing = newHearingView(e.Hearing(), e.SignedUnchecked())
			return v
		},
	}, nil
}
