package main

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/env"
	"github.com/lanleader/lanleader/election/static"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
	"github.com/lanleader/lanleader/metrics"
)

// elector is the chosen mode's Elector plus what the job runner and the
// status page can use from it. Modes without a network leave the optional
// hooks nil.
type elector struct {
	election.Elector
	// canRun is asked right before every job start.
	canRun func() bool
	// publish sends the job ledger to the followers at once, if the mode
	// carries one.
	publish func()
	// extra is the mode's own part of /status.
	extra func() any
}

// newElector builds the elector for s.Mode. Bad settings are returned as
// configError; failing to open the socket is a runtime error. ledger is
// what a udp leader piggybacks on its heartbeats; adopt receives the ledgers
// heard from other leaders.
func newElector(s settings, logger *slog.Logger, m *metrics.Metrics, ledger func() []byte, adopt func([]byte)) (*elector, error) {
	switch s.Mode {
	case "static":
		e, err := static.New(static.Config{NodeID: s.NodeID, Leader: s.Leader, Logger: logger})
		if err != nil {
			return nil, configError{err}
		}
		return &elector{Elector: e, canRun: leads(e)}, nil
	case "env":
		e, err := env.New(env.Config{NodeID: s.NodeID, Var: s.EnvVar, Logger: logger})
		if err != nil {
			return nil, configError{err}
		}
		return &elector{Elector: e, canRun: leads(e)}, nil
	case "udp":
		return newUDPElector(s, logger, m, ledger, adopt)
	default:
		return nil, configError{fmt.Errorf("--mode %q: want static, env or udp", s.Mode)}
	}
}

func leads(e election.Elector) func() bool {
	return func() bool { return e.Status().IsLeader() }
}

func newUDPElector(s settings, logger *slog.Logger, m *metrics.Metrics, ledger func() []byte, adopt func([]byte)) (*elector, error) {
	pc := protocol.DefaultLANConfig()
	pc.NodeID = s.NodeID
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
	pc.ClusterSize = s.ClusterSize
	pc.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(pc.Rand.Uint32()))
	if err := pc.Validate(); err != nil {
		return nil, configError{err}
	}
	var keyring *wire.Keyring
	if s.SecretFile != "" {
		k, err := wire.LoadKeyring(s.SecretFile)
		if err != nil {
			return nil, configError{fmt.Errorf("--secret-file (election.secret_file): %w", err)}
		}
		keyring = k
	} else {
		logger.Warn("no --secret-file: packets are not authenticated; anyone on the LAN can claim leadership")
	}
	broadcast := len(s.Peers) == 0
	bind, err := udp.ResolveBind(s.Bind, broadcast)
	if err != nil {
		return nil, configError{fmt.Errorf("--bind (election.bind): %w", err)}
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
		Payload:   ledger,
		OnPayload: func(_ string, _ uint64, p []byte) { adopt(p) },
		OnPacket:  m.PacketReceived,
	})
	if err != nil {
		t.Close()
		return nil, configError{err}
	}
	logger.Info("udp election", "addr", pc.Addr, "broadcast", bind.Broadcast, "interface", bind.Interface,
		"peers", s.Peers, "cluster", s.Cluster, "priority", s.Priority, "interval", s.Interval,
		"misses", s.Misses, "quorum", s.ClusterSize, "authenticated", keyring != nil)
	return &elector{
		Elector: e,
		canRun:  e.CanActAsLeader,
		publish: e.Publish,
		extra:   func() any { return newUDPView(e.Stats(), t.Stats()) },
	}, nil
}
