package cli

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// The udp settings that say how to reach the cluster (bind, port,
// transport, group, peers) are turned into a transport here, once, for the
// daemon and for the one-shot clients (who, trigger), so a client always
// talks the way the daemons listen.

// transportFlags registers the flags that say how to reach the cluster;
// prefix starts each help text ("udp mode: " for run).
func (s *udpSettings) transportFlags(fs *pflag.FlagSet, prefix string) {
	fs.StringVar(&s.Bind, "bind", s.Bind, prefix+"IPv4 or IPv6 address, or go-sockaddr template resolving to exactly one")
	fs.IntVar(&s.Port, "port", s.Port, prefix+"UDP port, the same on every node")
	fs.StringVar(&s.Transport, "transport", s.Transport, prefix+"broadcast, multicast or unicast (default: unicast with --peers, else broadcast)")
	fs.StringVar(&s.Group, "group", s.Group, prefix+"multicast group (default: derived from --cluster; 239.255.x.y or ff02::4c4c:x:y)")
	fs.Var((*peerList)(&s.Peers), "peers", prefix+"comma-separated host:port or [ipv6]:port list; unicast instead of broadcast")
}

// mode is the resolved transport mode.
func (s *udpSettings) mode() (udp.Mode, error) {
	m, err := udp.ParseMode(s.Transport)
	if err != nil {
		return "", err
	}
	return m.Resolve(len(s.Peers))
}

// checkGroup checks the multicast group against the bind address's family.
func (s *udpSettings) checkGroup(mode udp.Mode, bind udp.BindAddr) error {
	if mode != udp.ModeMulticast {
		return nil
	}
	_, err := udp.ResolveGroup(s.Group, s.Cluster, bind.Addr)
	return err
}

// transportConfig is the transport's config for a resolved mode and bind
// address.
func (s *udpSettings) transportConfig(logger *slog.Logger, mode udp.Mode, bind udp.BindAddr) udp.UDPConfig {
	return udp.UDPConfig{
		Mode:    mode,
		Bind:    bind.Addr.String(),
		Port:    s.Port,
		Peers:   s.Peers,
		Group:   s.Group,
		Cluster: s.Cluster,
		Logger:  logger,
	}
}

// clientTransport opens a transport for a one-shot client (who, trigger):
// the cluster's transport, from an ephemeral port. Errors name the flag.
func (s *udpSettings) clientTransport() (*udp.UDPTransport, error) {
	mode, err := s.mode()
	if err != nil {
		return nil, ConfigError{fmt.Errorf("--transport: %s", strings.TrimPrefix(err.Error(), "udp: "))}
	}
	bind, err := udp.ResolveBind(s.Bind, mode)
	if err != nil {
		return nil, ConfigError{fmt.Errorf("--bind: %s", strings.TrimPrefix(err.Error(), "udp: "))}
	}
	if err := s.checkGroup(mode, bind); err != nil {
		return nil, ConfigError{fmt.Errorf("--group: %s", strings.TrimPrefix(err.Error(), "udp: "))}
	}
	tc := s.transportConfig(slog.New(slog.DiscardHandler), mode, bind)
	tc.ListenPort = udp.AnyPort
	return udp.NewUDPTransport(tc)
}

// client opens what a client command (who, trigger) talks to the cluster
// with: the transport and, if --secret-file is given, the keyring.
func (s *udpSettings) client() (*udp.UDPTransport, *wire.Keyring, error) {
	var keyring *wire.Keyring
	if s.SecretFile != "" {
		k, err := loadKeyring(s.SecretFile)
		if err != nil {
			return nil, nil, ConfigError{fmt.Errorf("--secret-file: %w", err)}
		}
		keyring = k
	}
	t, err := s.clientTransport()
	if err != nil {
		return nil, nil, err
	}
	return t, keyring, nil
}
