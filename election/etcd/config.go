package etcd

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Defaults for Config.
const (
	// DefaultPrefix is the key prefix when none is configured. Clusters of
	// lanleader sharing one etcd need different prefixes.
	DefaultPrefix = "/lanleader/default"
	// DefaultSessionTTL is the lease TTL: a leader that dies is replaced
	// after about this long; a leader cut off from etcd stops acting a
	// little before it ends.
	DefaultSessionTTL = 10 * time.Second
	// MinSessionTTL is the shortest TTL accepted. etcd itself raises
	// leases below about 1.5 s (three election timeouts at default
	// settings), and a shorter one leaves no room for keepalives.
	MinSessionTTL = 2 * time.Second
	// DefaultDialTimeout bounds each attempt of Run to reach etcd
	// (connect, log in, one read) and authenticating when NewClient
	// creates a client with a Username.
	DefaultDialTimeout = 5 * time.Second
	// PasswordEnv is the environment variable the lanleader-etcd command
	// reads Config.Password from (and then removes from its environment,
	// so jobs do not inherit it).
	PasswordEnv = "LANLEADER_ETCD_PASSWORD"
)

// TLSFiles name the PEM files for a TLS connection to etcd. All empty means
// plain TCP (unless an endpoint says https, then the system roots verify the
// server). Cert and Key go together: a client certificate for etcd's
// --client-cert-auth.
type TLSFiles struct {
	// CA is the CA bundle that signs etcd's server certificates.
	CA string
	// Cert is this client's certificate.
	Cert string
	// Key is Cert's private key.
	Key string
}

// Config configures an Elector.
type Config struct {
	// NodeID is this node's id, the value of its leader key; required.
	NodeID string
	// Endpoints are etcd's client URLs (http://host:2379, https://...)
	// or host:port pairs; required unless Client is set.
	Endpoints []string
	// TLS are the files for TLS to etcd; zero means none.
	TLS TLSFiles
	// Username is the etcd user (etcd's RBAC, `etcdctl auth enable`) this
	// node authenticates as, with Password or PasswordFile; empty means no
	// username/password authentication (a client certificate's common
	// name may still name the user). Run logs in when it reaches etcd and
	// returns an error wrapping ErrCredentialsRejected if etcd rejects the
	// credentials; an unreachable etcd it keeps trying.
	Username string
	// Password is Username's password. Programs that hold it set it here;
	// the lanleader-etcd command fills it from PasswordEnv. Not together
	// with PasswordFile.
	Password string
	// PasswordFile names a file holding Username's password: its content
	// without one trailing newline. It is read when the Elector is
	// created. Not together with Password.
	PasswordFile string
	// Prefix is the key prefix of this lanleader cluster: the election
	// lives under Prefix+"/election", the job ledger under
	// Prefix+"/ledger". Default DefaultPrefix.
	Prefix string
	// SessionTTL is the lease TTL, whole seconds, at least MinSessionTTL.
	// Default DefaultSessionTTL.
	SessionTTL time.Duration
	// Margin is how long before the lease's earliest possible expiry
	// (by the local clock) the leader stops acting. Default SessionTTL/10.
	Margin time.Duration
	// DialTimeout bounds each attempt to reach etcd. Default
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// Client, if set, is used instead of dialing Endpoints; the Elector
	// does not close it. Tests and programs that already hold a client
	// set it.
	Client *clientv3.Client
	// BeforeLeading, if set, is called when this node has won the
	// election, before its leadership is reported: the job ledger is read
	// here (Ledger.TakeOver), so the runner knows what earlier leaders
	// started. An error gives the leadership up (resign, then campaign
	// again). ctx ends if the session does.
	BeforeLeading BeforeLeading
	// Logger receives the elector's events; nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults returns c with defaults filled in.
func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	c.Prefix = strings.TrimRight(c.Prefix, "/")
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.Margin == 0 {
		c.Margin = c.SessionTTL / 10
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// FieldError is one invalid setting. Field is its config key under
// election.etcd ("endpoints", "session_ttl", ...; "node_id" for NodeID), so
// a command line can point at the flag or file line that set it.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "etcd: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate checks c (after defaults) and returns every problem, each a
// *FieldError naming the setting and its value.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, a...)})
	}
	if c.NodeID == "" {
		bad("node_id", "empty")
	}
	if c.Client == nil {
		if len(c.Endpoints) == 0 {
			bad("endpoints", "none given (want e.g. https://etcd1:2379)")
		}
		for _, ep := range c.Endpoints {
			if err := checkEndpoint(ep, c.TLS); err != nil {
				bad("endpoints", "%q: %w", ep, err)
			}
		}
		errs = append(errs, c.TLS.check()...)
		errs = append(errs, c.checkAuth()...)
	}
	if c.Prefix == "" || !strings.HasPrefix(c.Prefix, "/") {
		bad("prefix", "%q: must start with / and name more than the root", c.Prefix)
	}
	switch {
	case c.SessionTTL < MinSessionTTL:
		bad("session_ttl", "%s: at least %s", c.SessionTTL, MinSessionTTL)
	case c.SessionTTL%time.Second != 0:
		bad("session_ttl", "%s: etcd leases are whole seconds", c.SessionTTL)
	}
	if c.Margin < 0 || c.Margin > c.SessionTTL/2 {
		bad("margin", "%s: between 0 and half the session TTL (%s)", c.Margin, c.SessionTTL/2)
	}
	if c.DialTimeout < 0 {
		bad("dial_timeout", "%s: must not be negative", c.DialTimeout)
	}
	return errors.Join(errs...)
}

// checkEndpoint accepts a URL with scheme http or https, or host:port.
func checkEndpoint(ep string, t TLSFiles) error {
	if !strings.Contains(ep, "://") {
		if _, _, err := net.SplitHostPort(ep); err != nil {
			return fmt.Errorf("want http(s)://host:port or host:port: %w", err)
		}
		return nil
	}
	u, err := url.Parse(ep)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "https":
	case "http":
		if t.CA != "" || t.Cert != "" {
			return errors.New("plain http, but TLS files are configured: write https://")
		}
	default:
		return fmt.Errorf("scheme %q: want http or https", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("no host")
	}
	return nil
}

// check reports missing or half-given TLS files.
func (t TLSFiles) check() []error {
	var errs []error
	if (t.Cert == "") != (t.Key == "") {
		errs = append(errs, &FieldError{Field: "cert_file", Err: fmt.Errorf("%q with key_file %q: give both or neither", t.Cert, t.Key)})
	}
	for _, f := range []struct{ key, path string }{{"ca_file", t.CA}, {"cert_file", t.Cert}, {"key_file", t.Key}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			errs = append(errs, &FieldError{Field: f.key, Err: err})
		}
	}
	return errs
}

// checkAuth reports a password file that cannot be read or is empty, and
// a username without a password or the reverse.
func (c Config) checkAuth() []error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, a...)})
	}
	if c.PasswordFile != "" && c.Password != "" {
		bad("password_file", "%q, and a password is also given directly (%s): give one", c.PasswordFile, PasswordEnv)
	}
	havePassword := c.Password != ""
	if c.PasswordFile != "" {
		if _, err := c.password(); err != nil {
			bad("password_file", "%w", err)
		}
		havePassword = true
	}
	switch {
	case c.Username != "" && !havePassword:
		bad("username", "%q without a password: set password_file or %s", c.Username, PasswordEnv)
	case c.Username == "" && havePassword:
		bad("username", "empty, but a password is given (password_file or %s): set the user it belongs to", PasswordEnv)
	}
	return errs
}

// password returns Password, or PasswordFile's content without one
// trailing newline; an empty password is an error.
func (c Config) password() (string, error) {
	if c.PasswordFile == "" {
		return c.Password, nil
	}
	b, err := os.ReadFile(c.PasswordFile)
	if err != nil {
		return "", err // names the file
	}
	pw := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if pw == "" {
		return "", fmt.Errorf("%q: empty", c.PasswordFile)
	}
	return pw, nil
}
