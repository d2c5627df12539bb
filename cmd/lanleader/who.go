package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/wire"
)

func whoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s := defaultSettings()
	fs := newFlagSet("who", stderr)
	fs.StringVar(&s.Cluster, "cluster", s.Cluster, "cluster name")
	fs.StringVar(&s.Bind, "bind", s.Bind, "IPv4 address or go-sockaddr template to ask from")
	fs.IntVar(&s.Port, "port", s.Port, "the cluster's UDP port")
	fs.Var((*peerList)(&s.Peers), "peers", "comma-separated host:port list to ask instead of broadcasting")
	fs.StringVar(&s.SecretFile, "secret-file", "", "file of HMAC keys, if the cluster uses them")
	timeout := fs.Duration("timeout", time.Second, "how long to wait for answers")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	var keyring *wire.Keyring
	if s.SecretFile != "" {
		k, err := wire.LoadKeyring(s.SecretFile)
		if err != nil {
			return configError{fmt.Errorf("--secret-file: %w", err)}
		}
		keyring = k
	}
	bind, err := udp.ResolveBind(s.Bind, len(s.Peers) == 0)
	if err != nil {
		return configError{fmt.Errorf("--bind: %w", err)}
	}
	t, err := udp.NewUDPTransport(udp.UDPConfig{
		Bind:       bind.Addr.String(),
		Port:       s.Port,
		ListenPort: udp.AnyPort,
		Peers:      s.Peers,
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return err
	}
	defer t.Close()

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	answers, err := udp.Query(ctx, t, s.Cluster, keyring)
	if err != nil {
		return err
	}
	switch len(answers) {
	case 0:
		return fmt.Errorf("no leader of cluster %q answered within %v", s.Cluster, *timeout)
	case 1:
	default:
		fmt.Fprintf(stderr, "warning: %d nodes claim to lead (split brain or a handover in progress)\n", len(answers))
	}
	fmt.Fprintf(stdout, "%-20s %-12s %-22s %s\n", "LEADER", "TERM", "ADDRESS", "RTT")
	for _, a := range answers {
		fmt.Fprintf(stdout, "%-20s %-12d %-22s %v\n", a.Leader, a.Term, a.Addr, a.RTT.Round(10*time.Microsecond))
	}
	return nil
}
