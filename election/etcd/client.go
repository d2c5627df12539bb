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

// ErrCredentialsRejected is (wrapped) NewClient's and Elector.Run's error
// when etcd refuses Config.Username's password.
var ErrCredentialsRejected = errors.New("etcd rejected the credentials")

// NewClient dials etcd as cfg says (endpoints, TLS files, user, dial
// timeout). Without a Username dialing does not wait for a connection: an
// unreachable etcd shows up as failing calls. With one, the client
// authenticates at once: NewClient fails (wrapping ErrCredentialsRejected
// if etcd refused them) unless an endpoint accepts the credentials within
// the dial timeout. The caller closes the client. An Elector dials in Run
// and tries again while etcd is unreachable.
func NewClient(cfg Config) (*clientv3.Client, error) {
	cfg = cfg.withDefaults()
	cc, err := cfg.clientConfig()
	if err != nil {
		return nil, err
	}
	return dial(cfg, cc)
}

// clientConfig reads the TLS files and the password into the client's
// config, so that a bad file is found before anything is dialed.
func (cfg Config) clientConfig() (clientv3.Config, error) {
	tlsCfg, err := cfg.TLS.clientConfig(cfg.Endpoints)
	if err != nil {
		return clientv3.Config{}, err
	}
	password, err := cfg.password()
	if err != nil {
		return clientv3.Config{}, &FieldError{Field: "password_file", Err: err}
	}
	return clientv3.Config{
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
	}, nil
}

// dial creates the client of cc (cfg's clientConfig); with a Username it
// authenticates within the dial timeout.
func dial(cfg Config, cc clientv3.Config) (*clientv3.Client, error) {
	c, err := clientv3.New(cc)
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
