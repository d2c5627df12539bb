package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/udpjobs"
	"github.com/lanleader/lanleader/election/udp/wire"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/metrics"
)

// udpMode: the nodes elect a leader among themselves with broadcast (or
// unicast) UDP claims and heartbeats.
func udpMode() Mode {
	return Mode{
		Name:    "udp",
		Summary: "the nodes elect a leader over the LAN (UDP broadcast, multicast or --peers)",
		Keys: []string{"cluster", "bind", "port", "transport", "group", "peers", "priority", "interval", "misses",
			"preempt", "cluster_size", "quorum", "role", "secret_file", "trigger_without_key", "max_clock_offset"},
		Setup: func(fs *pflag.FlagSet) ModeSettings {
			s := defaultUDPSettings()
			s.flags(fs)
			return s
		},
	}
}

// udpSettings are the udp mode's settings.
type udpSettings struct {
	Cluster string
	Bind    string
	Port    int
	// Transport is broadcast, multicast or unicast; "" picks unicast when
	// Peers are listed, else broadcast.
	Transport string
	// Group is the multicast group; "" derives it from Cluster.
	Group    string
	Peers    []string
	Priority int
	Interval time.Duration
	Misses   int
	Preempt  bool
	// ClusterSize is the number of voters (0: not given); with Peers and
	// Quorum it decides the guarantee (guarantee.go).
	ClusterSize int
	// Quorum is auto, on or off ("": auto).
	Quorum string
	// Role is node or witness ("": node).
	Role       string
	SecretFile string
	// MaxClockOffset is the bound past which a peer's clock offset is
	// logged at WARN (udp.DefaultMaxClockOffset by default).
	MaxClockOffset time.Duration
	// TriggerWithoutKey accepts `lanleader trigger` requests although
	// there is no key (SecretFile), from anyone on the LAN; without it,
	// a cluster without a key refuses them. File only.
	TriggerWithoutKey bool

	// g is the guarantee, derived by Load and, from the peers' resolved
	// addresses, again by New.
	g guarantee
	// testClockOffset shifts the wall clock this node stamps on its
	// reports and measures its followers by: the hidden, test-only
	// --test-clock-offset, for a netns scenario of a node whose clock is
	// off (scripts/netns).
	testClockOffset time.Duration
	// keyring is SecretFile's keys, loaded by Load.
	keyring *wire.Keyring
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
		Quorum:   quorumAuto,
		Role:     roleNode,

		MaxClockOffset: udp.DefaultMaxClockOffset,
	}
}

// wallClock is the wall clock the elector stamps and measures by: the
// host's, shifted by the test-only --test-clock-offset.
func (s *udpSettings) wallClock() func() time.Time {
	if d := s.testClockOffset; d != 0 {
		return func() time.Time { return time.Now().Add(d) }
	}
	return nil
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
	fs.StringVar(&s.Cluster, "cluster", s.Cluster, "udp mode: cluster name (1-64 bytes of printable UTF-8, spaces allowed); clusters on one LAN ignore each other")
	s.transportFlags(fs, "udp mode: ")
	fs.IntVar(&s.Priority, "priority", s.Priority, "udp mode: 0-255, higher wins ties and claims sooner")
	fs.DurationVar(&s.Interval, "interval", s.Interval, "udp mode: heartbeat interval")
	fs.IntVar(&s.Misses, "misses", s.Misses, "udp mode: silent intervals before a follower suspects the leader")
	fs.BoolVar(&s.Preempt, "preempt", s.Preempt, "udp mode: a higher-priority node takes over from a sitting leader")
	fs.IntVar(&s.ClusterSize, "cluster-size", s.ClusterSize, "udp mode: number of voters, witnesses included; a leader needs a majority (default: counted from --peers)")
	fs.StringVar(&s.Quorum, "quorum", s.Quorum, "udp mode: auto (on when the voters are known and at least 3), on or off")
	fs.StringVar(&s.Role, "role", s.Role, "udp mode: node, or witness (votes and acknowledges, never leads, runs no jobs)")
	fs.StringVar(&s.SecretFile, "secret-file", s.SecretFile, "udp mode: file of HMAC keys (first signs, all verify)")
	fs.DurationVar(&s.MaxClockOffset, "max-clock-offset", s.MaxClockOffset, "udp mode: a follower whose wall clock is off by more is named at WARN by its leader")
	fs.DurationVar(&s.testClockOffset, "test-clock-offset", 0, "test only: shift the wall clock this node's reports say it has and it measures by")
	_ = fs.MarkHidden("test-clock-offset")
}

// merge applies the file's udp keys, except where a flag was given. Keys
// written in the file win even when zero, so that `port: 0` is an error
// rather than the default.
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
	str("transport", &s.Transport, e.Transport)
	str("group", &s.Group, e.Group)
	str("secret-file", &s.SecretFile, e.SecretFile)
	str("quorum", &s.Quorum, e.Quorum)
	str("role", &s.Role, e.Role)
	if src.InFile("port") && !src.Changed("port") {
		s.Port = e.Port
	}
	if len(e.Peers) > 0 && !src.Changed("peers") {
		s.Peers = e.Peers
	}
	if e.Priority != nil && !src.Changed("priority") {
		s.Priority = *e.Priority
	}
	if src.InFile("interval") && !src.Changed("interval") {
		s.Interval = e.Interval
	}
	if src.InFile("misses") && !src.Changed("misses") {
		s.Misses = e.Misses
	}
	if e.ClusterSize != 0 && !src.Changed("cluster-size") {
		s.ClusterSize = e.ClusterSize
	}
	if e.Preempt != nil && !src.Changed("preempt") {
		s.Preempt = *e.Preempt
	}
	if v, err := s.triggerWithoutKey(src); err == nil {
		s.TriggerWithoutKey = v
	}
	if v, ok, err := s.maxClockOffset(src); ok && err == nil && !src.Changed("max-clock-offset") {
		s.MaxClockOffset = v
	}
}

// maxClockOffset reads election.max_clock_offset: a positive duration.
func (s *udpSettings) maxClockOffset(src *Source) (time.Duration, bool, error) {
	var v string
	if ok, err := src.Decode("max_clock_offset", &v); !ok || err != nil {
		return 0, ok, err
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, true, src.Problem("max_clock_offset", "max-clock-offset", "%q: not a duration", v)
	}
	return d, true, nil
}

// triggerWithoutKey reads election.trigger_without_key, as strictly as the
// file's other booleans: true or false.
func (s *udpSettings) triggerWithoutKey(src *Source) (bool, error) {
	var v string
	if ok, err := src.Decode("trigger_without_key", &v); !ok || err != nil {
		return false, err
	}
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, src.Problem("trigger_without_key", "", "expected true or false, found %q", v)
}

// Load merges and checks every udp setting without touching the network:
// values and their relationships (the protocol's own rules, named by key),
// the key file, the peers' syntax, and the bind address (a warning if it
// is not up on this host yet: run waits for it).
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
	if s.Misses < 2 {
		bad("misses", "%d: want at least 2 (one lost packet must not start an election)", s.Misses)
	}
	// The protocol forgets a peer silent for ForgetPeerAfter: a leader
	// must be suspected before that. Said here in the user's keys, not in
	// the protocol's field names.
	forget := protocol.DefaultLANConfig().ForgetPeerAfter
	if s.Interval > 0 && s.Misses >= 2 && (s.Interval > forget || time.Duration(s.Misses)*s.Interval > forget) {
		key := "interval"
		if (src.Changed("misses") || src.InFile("misses")) && !src.Changed("interval") && !src.InFile("interval") {
			key = "misses"
		}
		bad(key, "interval %v × misses %d is over %v: a follower must suspect a silent leader before it forgets a silent peer (%v)",
			s.Interval, s.Misses, forget, forget)
	}
	if err := election.CheckClusterName(s.Cluster); err != nil {
		bad("cluster", "%q: %v", s.Cluster, err)
	}
	if s.ClusterSize < 0 || s.ClusterSize > 255 {
		bad("cluster_size", "%d: want 1-255 voters (0: counted from peers, or none)", s.ClusterSize)
	}
	if s.Quorum != quorumAuto && s.Quorum != quorumOn && s.Quorum != quorumOff {
		bad("quorum", "%q: want auto, on or off", s.Quorum)
	}
	if s.Role != roleNode && s.Role != roleWitness {
		bad("role", "%q: want node or witness", s.Role)
	}
	peersOK := true
	for _, p := range s.Peers {
		if err := checkPeer(p, s.Port); err != nil {
			bad("peers", "%v", err)
			peersOK = false
		}
	}
	if len(errs) == 0 && peersOK {
		var err error
		s.g, err = deriveGuarantee(s.ClusterSize, peerVoters(s.Peers, s.Port, src.NodeID), s.Quorum, s.witness())
		var gp guaranteeProblem
		if errors.As(err, &gp) {
			bad(gp.key, "%v", gp.err)
		}
	}
	if s.Preempt && s.g.Quorum {
		bad("preempt", "not supported in quorum mode, which is on: %s; set quorum: off to keep preempt", s.g)
	}
	if len(errs) == 0 {
		if _, err := s.protocolConfig(src.NodeID); err != nil {
			errs = append(errs, protocolProblem(src, err))
		}
	}
	s.keyring = nil
	if s.SecretFile != "" {
		k, err := loadKeyring(s.SecretFile)
		if err != nil {
			bad("secret_file", "%v", err)
		}
		s.keyring = k
	} else if s.TriggerWithoutKey {
		src.Warn("no secret_file: packets are not authenticated; anyone on the LAN can claim leadership " +
			"and, with trigger_without_key, run jobs (lanleader keygen makes a key)")
	} else {
		src.Warn("no secret_file: packets are not authenticated; anyone on the LAN can claim leadership; " +
			"trigger requests are refused (lanleader keygen makes a key; trigger_without_key: true accepts them)")
	}
	if _, err := s.triggerWithoutKey(src); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := s.maxClockOffset(src); err != nil {
		errs = append(errs, err)
	} else if s.MaxClockOffset <= 0 {
		bad("max_clock_offset", "%v: must be positive", s.MaxClockOffset)
	}
	if mode, err := s.mode(); err != nil {
		bad("transport", "%s", strings.TrimPrefix(err.Error(), "udp: "))
	} else if bind, err := udp.ResolveBind(s.Bind, mode); err != nil {
		msg := strings.TrimPrefix(err.Error(), "udp: ")
		if errors.Is(err, udp.ErrAddressNotUp) {
			// run logs "waiting for the bind address to come up" itself.
			src.warnCheckOnly("%s (run waits for the address to come up)", msg)
		} else {
			bad("bind", "%s", msg)
		}
	} else if err := s.checkGroup(mode, bind); err != nil {
		bad("group", "%s", strings.TrimPrefix(err.Error(), "udp: "))
	}
	return errors.Join(errs...)
}

// loadKeyring loads a key file for run, who and trigger, with errors in
// the user's terms: no package prefix, and how to make a missing file.
func loadKeyring(path string) (*wire.Keyring, error) {
	k, err := wire.LoadKeyring(path)
	if err == nil {
		return k, nil
	}
	msg := strings.TrimPrefix(err.Error(), "wire: ")
	if errors.Is(err, fs.ErrNotExist) {
		msg += fmt.Sprintf(" (make one with: lanleader keygen %s; then copy it to every node)", path)
	}
	return nil, errors.New(msg)
}

// checkPeer checks a peer's syntax (host or host:port); names are
// resolved when run starts.
func checkPeer(p string, defaultPort int) error {
	host, port, err := net.SplitHostPort(p)
	if err != nil {
		host, port = p, strconv.Itoa(defaultPort)
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]") // "[fd00::1]" without a port
	if host == "" || strings.ContainsAny(host, " /,") {
		return fmt.Errorf("%q: want host:port, e.g. 192.168.1.11:%d or [fd00::11]:%d", p, defaultPort, defaultPort)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port %q: want 1-65535", p, port)
	}
	if _, err := netip.ParseAddr(host); err != nil && !validHostname(host) {
		return fmt.Errorf("%q: %q is neither an IP address nor a host name", p, host)
	}
	return nil
}

// protocolKeys maps the protocol's Config fields to their config keys.
var protocolKeys = map[string]string{
	"NodeID": "node_id", "Cluster": "cluster", "Interval": "interval", "Misses": "misses",
	"ClusterSize": "cluster_size", "Preempt": "preempt", "Priority": "priority",
}

// protocolProblem turns the protocol's "protocol: config Field ..." into a
// problem named by key.
func protocolProblem(src *Source, err error) error {
	msg := strings.TrimPrefix(err.Error(), "protocol: config ")
	field, rest, _ := strings.Cut(msg, " ")
	if key, ok := protocolKeys[field]; ok {
		return src.Problem(key, strings.ReplaceAll(key, "_", "-"), "%s", rest)
	}
	return fmt.Errorf("election settings: %s", msg)
}

// protocolConfig derives the protocol's config from the settings.
func (s *udpSettings) protocolConfig(nodeID string) (protocol.Config, error) {
	pc := protocol.DefaultLANConfig()
	pc.NodeID = nodeID
	pc.Cluster = s.Cluster
	pc.Priority = uint8(s.Priority)
	pc.Interval = s.Interval
	pc.Misses = s.Misses
	pc.MaxMisses = max(pc.MaxMisses, s.Misses)
	pc.Preempt = s.Preempt
	pc.BackoffMax = 0 // Interval/2: scales with --interval
	// The claim window is a few LAN round trips, but must stay well under
	// the interval for very fast settings.
	pc.ClaimWindow = min(pc.ClaimWindow, s.Interval/4)
	pc.ClusterSize = s.g.quorumVoters()
	pc.Witness = s.witness()
	pc.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(pc.Rand.Uint32()))
	return pc, pc.Validate()
}

// bindPoll is how often New looks for a bind address that is not up yet.
const bindPoll = time.Second

// openTransport resolves the bind address and opens the sockets on it,
// waiting while the address is not up (waitUp). Errors name the setting.
func (s *udpSettings) openTransport(env Env, mode udp.Mode) (*udp.UDPTransport, udp.BindAddr, error) {
	type opened struct {
		t    *udp.UDPTransport
		bind udp.BindAddr
	}
	o, err := waitUp(env, s.Bind, func() (opened, error) {
		bind, err := udp.ResolveBind(s.Bind, mode)
		if err != nil {
			return opened{}, err
		}
		t, err := udp.NewUDPTransport(s.transportConfig(env.Logger, mode, bind))
		return opened{t, bind}, err
	})
	switch {
	case env.Context.Err() != nil && errors.Is(err, env.Context.Err()):
		return nil, o.bind, err // stopped while waiting
	case err != nil && o.bind.Addr.IsValid():
		addr := netip.AddrPortFrom(o.bind.Addr, uint16(s.Port))
		return nil, o.bind, fmt.Errorf("udp socket %s (--bind, --port, --peers): %s", addr, strings.TrimPrefix(err.Error(), "udp: "))
	case err != nil:
		return nil, o.bind, ConfigError{fmt.Errorf("--bind (election.bind): %s", strings.TrimPrefix(err.Error(), "udp: "))}
	}
	return o.t, o.bind, nil
}

// waitUp calls open until it fails with anything but an address that is
// not up yet (udp.ErrAddressNotUp: no interface has the bind address, or
// its link is down), every bindPoll, saying so at WARN at once and then
// every minute: a node that boots before its network, or whose link is
// down, joins once the address comes up, instead of exiting. It gives up
// when env.Context ends.
func waitUp[T any](env Env, bind string, open func() (T, error)) (T, error) {
	var lastLog time.Time
	for {
		v, err := open()
		if !errors.Is(err, udp.ErrAddressNotUp) {
			return v, err
		}
		if lastLog.IsZero() || time.Since(lastLog) >= time.Minute {
			env.Logger.Warn("waiting for the bind address to come up", "bind", bind,
				"err", strings.TrimPrefix(err.Error(), "udp: "))
			lastLog = time.Now()
		}
		t := time.NewTimer(bindPoll)
		select {
		case <-env.Context.Done():
			t.Stop()
			return v, fmt.Errorf("stopped while waiting for --bind %s to come up: %w", bind, env.Context.Err())
		case <-t.C:
		}
	}
}

// Succession is udp.SuccessionFor the cluster size.
func (s *udpSettings) Succession() election.Succession { return udp.SuccessionFor(s.ClusterSize) }

func (s *udpSettings) New(env Env) (*Elector, error) {
	logger := env.Logger
	pc, err := s.protocolConfig(env.NodeID)
	if err != nil {
		return nil, ConfigError{err}
	}
	if s.keyring == nil && s.SecretFile != "" {
		return nil, ConfigError{fmt.Errorf("--secret-file (election.secret_file) %s not loaded", s.SecretFile)}
	}
	mode, err := s.mode()
	if err != nil {
		return nil, ConfigError{fmt.Errorf("--transport (election.transport): %s", strings.TrimPrefix(err.Error(), "udp: "))}
	}
	t, bind, err := s.openTransport(env, mode)
	if err != nil {
		return nil, err
	}
	pc.Addr = netip.AddrPortFrom(bind.Addr, uint16(s.Port)).String()
	if err := s.settleGuarantee(&pc, t.Peers()); err != nil {
		t.Close()
		return nil, ConfigError{err}
	}
	s.logGuarantee(logger)
	var onDurable func(protocol.Durable) error
	if env.State != nil {
		pc.Resume = env.State.State().Durable()
		onDurable = env.State.SaveDurable
	}
	e, err := udp.New(udp.Config{
		Protocol:  pc,
		Transport: t,
		Keyring:   s.keyring,
		Logger:    logger,
		Payload:   env.Ledger,
		OnPayload: func(h protocol.PeerPayload) error { return env.AdoptLedger(h.From, udpjobs.HoldWordOf(h), h.Payload) },
		OnDurable: onDurable,
		OnPacket:  env.Metrics.PacketReceived,
		OnRequest: onRequest(env.Request),
		Wall:      s.wallClock(),
		// A peer whose clock is off by more is named at WARN.
		MaxClockOffset: s.MaxClockOffset,
		// Hearing nobody is worth a WARN when others are expected.
		ExpectPeers: len(s.Peers) > 0 || s.g.Quorum,
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
		env.Metrics.SetGuarantee(s.g.quorumVoters(), s.witness())
		if s.g.Quorum {
			env.Metrics.WatchQuorum(func() metrics.Quorum {
				q, st := e.Quorum(), e.Stats()
				return metrics.Quorum{Lost: q.Lost, Reachable: q.Reachable, Overfull: q.Overfull, HeardIDs: q.Heard,
					ClaimsWithoutMajority: st.QuorumFailed, LeasesLost: st.LeaseLost, LeaseRetries: st.LeaseRetries}
			})
		}
		env.Metrics.WatchClockOffsets(func() []metrics.ClockOffset { return clockMetrics(e) })
		// The same numbers as /status's udp view.
		env.Metrics.WatchTransport(func() metrics.Transport {
			v := newUDPView(e.Stats(), e.Quorum(), t.Stats())
			return metrics.Transport{PacketsSent: v.PacketsOut, PacketsReceived: v.PacketsIn, Dropped: v.Dropped}
		})
	}
	logger.Info("udp election", "addr", pc.Addr, "transport", t.Mode(), "interface", bind.Interface,
		"peers", s.Peers, "cluster", s.Cluster, "priority", s.Priority, "interval", s.Interval,
		"misses", s.Misses, "quorum", s.g.Quorum, "voters", s.g.Voters, "role", s.Role, "authenticated", s.keyring != nil)
	return &Elector{
		Elector: e,
		Cluster: udpjobs.Cluster(e),
		Why:     stepDownReason(e),
		View: func() any {
			v := newUDPView(e.Stats(), e.Quorum(), t.Stats())
			v.Hearing = newHearingView(e.Hearing(), e.SignedUnchecked())
			v.Guarantee = newGuaranteeView(s.g)
			v.Clock = newClockView(e)
			return v
		},
		RefuseRequests: s.keyring == nil && !s.TriggerWithoutKey,
		Nodes:          func() []httpapi.NodeView { return udpNodes(e) },
		Quorum:         func() httpapi.QuorumView { return udpQuorum(e.Quorum(), s.g) },
	}, nil
}

// onRequest hands the udp elector's client requests to the daemon's
// handler (Env.Request), if any.
func onRequest(handle func(from, addr string, payload []byte) []byte) func(udp.ClientRequest) []byte {
	if handle == nil {
		return nil
	}
	return func(r udp.ClientRequest) []byte { return handle(r.From, r.Addr.String(), r.Payload) }
}

// stepDownReason returns the udp mode's Elector.Why: it compares the
// protocol's counters with those noted when the leadership started.
func stepDownReason(e *udp.Elector) func() string {
	var mu sync.Mutex
	var base protocol.Stats
	return func() string {
		st, q := e.Stats(), e.Quorum()
		mu.Lock()
		defer mu.Unlock()
		prev := base
		base = st
		return stepDownWhy(prev, st, q)
	}
}

// Values of election.role (--role).
const (
	roleNode    = "node"
	roleWitness = "witness"
)

// witness reports whether this node is a witness.
func (s *udpSettings) witness() bool { return s.Role == roleWitness }

// neverLeads is a witness's: it never leads, so it runs no jobs or
// services (runFlags.load leaves them out).
func (s *udpSettings) neverLeads() bool { return s.witness() }

// settleGuarantee derives the guarantee again from the addresses the
// peers resolved to (others: the transport's, this node's own left out),
// which run knows and check-config does not, and sets pc's cluster size
// from it.
func (s *udpSettings) settleGuarantee(pc *protocol.Config, others []netip.AddrPort) error {
	voters := 0
	if len(s.Peers) > 0 {
		voters = resolvedVoters(others)
	}
	g, err := deriveGuarantee(s.ClusterSize, voters, s.Quorum, s.witness())
	var gp guaranteeProblem
	if errors.As(err, &gp) {
		return fmt.Errorf("election.%s (or --%s), with the peers resolved: %w", gp.key, strings.ReplaceAll(gp.key, "_", "-"), gp.err)
	}
	s.g = g
	pc.ClusterSize = g.quorumVoters()
	return pc.Validate()
}

// logGuarantee says the guarantee in force, one line among the first: at
// INFO with quorum or when the file turned it off, at WARN when it is off
// because the voters are unknown or too few.
func (s *udpSettings) logGuarantee(logger *slog.Logger) {
	level := slog.LevelInfo
	if !s.g.Quorum && !s.g.Off {
		level = slog.LevelWarn
	}
	logger.Log(context.Background(), level, s.g.String(), "quorum", s.g.Quorum, "voters", s.g.Voters, "role", s.Role)
}

// guaranteeLine is the guarantee as check-config can tell it: from the
// peers as written (run counts the addresses they resolve to).
func (s *udpSettings) guaranteeLine() string { return s.g.String() }

// stepDownWhy says why a leadership ended, from the protocol's counters
// when it started (prev) and when it ended (st): the counter of the cause
// that ended it. A pause or a loss noticed during the leadership that did
// not end it is not the reason.
func stepDownWhy(prev, st protocol.Stats, q protocol.QuorumStatus) string {
	switch {
	case st.PausedStepDown > prev.PausedStepDown:
		return "resumed from a pause as long as the followers wait before suspecting it: leadership unknown until the cluster is heard again"
	case st.LeaseLost > prev.LeaseLost && q.Overfull:
		return fmt.Sprintf("quorum lost: more node ids heard than cluster_size %d", q.Size)
	case st.LeaseLost > prev.LeaseLost:
		return fmt.Sprintf("quorum lost: %d of %d nodes reachable, %d needed", q.Reachable, q.Size, q.Majority)
	case st.DeafStepDown > prev.DeafStepDown:
		return "this node's own heartbeats stopped coming back: it cannot receive"
	case st.DuplicateStepDown > prev.DuplicateStepDown:
		return "another process with this node id started first"
	case st.Rejected > prev.Rejected:
		return "the other nodes' followers reject it: it does not hear their leader"
	case st.SteppedDown > prev.SteppedDown:
		return "a better leader or claim was heard"
	}
	return ""
}
