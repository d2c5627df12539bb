package etcd

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrCredentialsRejected is (wrapped) NewClient's and New's error when
// etcd refuses Config.Username's password.
var ErrCredentialsRejected = errors.New("etcd rejected the credentials")

// NewClient dials etcd as cfg says (endpoints, TLS files, user, dial
// timeout). Without a Username dialing does not wait for a connection: an
// unreachable etcd shows up as failing calls, which the Elector retries.
// With one, the client authenticates at once: NewClient fails (wrapping
// ErrCredentialsRejected if etcd refused them) unless an endpoint accepts
// the credentials within the dial timeout. The caller closes the client.
func NewClient(cfg Config) (*clientv3.Client, error) {
	cfg = cfg.withDefaults()
	tlsCfg, err := cfg.TLS.clientConfig(cfg.Endpoints)
	if err != nil {
		return nil, err
	}
	password, err := cfg.password()
	if err != nil {
		return nil, &FieldError{Field: "password_file", Err: err}
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		TLS:         tlsCfg,
		Username:    cfg.Username,
		Password:    password,
		DialTimeout: cfg.DialTimeout,
		// gRPC keepalives notice a dead connection within about a TTL, so
		// the client fails over to another endpoint.
		DialKeepAliveTime:    cfg.SessionTTL / 2,
		DialKeepAliveTimeout: cfg.SessionTTL / 2,
		Logger:               zapToSlog(cfg.Logger.With("component", "etcd-client")),
	})
	endpoints := strings.Join(cfg.Endpoints, ",")
	switch {
	case err == nil:
		return c, nil
	case cfg.Username != "" && errors.Is(rpctypes.Error(err), rpctypes.ErrAuthFailed):
		return nil, fmt.Errorf("etcd: %w for user %q at endpoint %s: %w", ErrCredentialsRejected, cfg.Username, endpoints, err)
	case cfg.Username != "":
		return nil, fmt.Errorf("etcd: authenticating as user %q at endpoint %s (dial timeout %s): %w", cfg.Username, endpoints, cfg.DialTimeout, err)
	}
	return nil, fmt.Errorf("etcd: client for %s: %w", endpoints, err)
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
