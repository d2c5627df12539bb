package etcd

import (
	"crypto/tls"
	"fmt"
	"strings"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// NewClient dials etcd as cfg says (endpoints, TLS files, dial timeout).
// Dialing does not wait for a connection: an unreachable etcd shows up as
// failing calls, which the Elector retries. The caller closes the client.
func NewClient(cfg Config) (*clientv3.Client, error) {
	cfg = cfg.withDefaults()
	tlsCfg, err := cfg.TLS.clientConfig(cfg.Endpoints)
	if err != nil {
		return nil, err
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		TLS:         tlsCfg,
		DialTimeout: cfg.DialTimeout,
		// gRPC keepalives notice a dead connection within about a TTL, so
		// the client fails over to another endpoint.
		DialKeepAliveTime:    cfg.SessionTTL / 2,
		DialKeepAliveTimeout: cfg.SessionTTL / 2,
		Logger:               zapToSlog(cfg.Logger.With("component", "etcd-client")),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: client for %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	return c, nil
}

// clientConfig returns the TLS config for the files, nil for plain TCP.
func (t TLSFiles) clientConfig(endpoints []string) (*tls.Config, error) {
	if t == (TLSFiles{}) {
		for _, ep := range endpoints {
			if strings.HasPrefix(ep, "https://") {
				// Verify against the system roots.
				return &tls.Config{MinVersion: tls.VersionTLS12}, nil
			}
		}
		return nil, nil
	}
	info := transport.TLSInfo{TrustedCAFile: t.CA, CertFile: t.Cert, KeyFile: t.Key}
	c, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd: TLS files (ca %q, cert %q, key %q): %w", t.CA, t.Cert, t.Key, err)
	}
	return c, nil
}
