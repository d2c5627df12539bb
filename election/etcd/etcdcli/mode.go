// Package etcdcli registers the etcd election mode with lanleader's command
// line (package cli): its flags, its election.etcd config keys, and the
// wiring of the Elector and the etcd job ledger into `lanleader run`.
//
//	cli.Main(etcdcli.Mode())
//
// builds a lanleader binary that also has --mode=etcd; cmd/lanleader-etcd
// is that binary.
package etcdcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/lanleader/lanleader/cli"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/etcd"
	"github.com/lanleader/lanleader/jobs"
)

// Name is the mode's name: --mode=etcd, election.mode: etcd, and the key of
// its settings under election:.
const Name = "etcd"

// Mode returns the etcd mode for cli.Main and cli.Execute.
func Mode() cli.Mode {
	// One per Mode, so a reload's fresh settings share it.
	pw := &envPassword{}
	return cli.Mode{
		Name:    Name,
		Summary: "leadership from an etcd cluster: for nodes in several subnets or sites that already run etcd",
		Keys:    []string{Name},
		Setup: func(fs *pflag.FlagSet) cli.ModeSettings {
			s := &settings{Prefix: etcd.DefaultPrefix, SessionTTL: etcd.DefaultSessionTTL, env: pw}
			s.flags(fs)
			return s
		},
	}
}

// fileSettings is election.etcd in the config file.
type fileSettings struct {
	Endpoints    []string      `yaml:"endpoints"`
	CAFile       string        `yaml:"ca_file"`
	CertFile     string        `yaml:"cert_file"`
	KeyFile      string        `yaml:"key_file"`
	Username     string        `yaml:"username"`
	PasswordFile string        `yaml:"password_file"`
	Prefix       string        `yaml:"prefix"`
	SessionTTL   time.Duration `yaml:"session_ttl"`
}

// settings are the mode's settings within one command.
type settings struct {
	Endpoints    []string
	TLS          etcd.TLSFiles
	Username     string
	PasswordFile string
	Prefix       string
	SessionTTL   time.Duration
	// password is $LANLEADER_ETCD_PASSWORD (etcd.PasswordEnv), from env.
	password string
	env      *envPassword
}

// flagOf maps a config key under election.etcd to its flag.
var flagOf = map[string]string{
	"endpoints":     "etcd-endpoints",
	"ca_file":       "etcd-ca-file",
	"cert_file":     "etcd-cert-file",
	"key_file":      "etcd-key-file",
	"username":      "etcd-username",
	"password_file": "etcd-password-file",
	"prefix":        "etcd-prefix",
	"session_ttl":   "etcd-session-ttl",
}

func (s *settings) flags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&s.Endpoints, "etcd-endpoints", nil, "etcd mode: comma-separated etcd client URLs (https://etcd1:2379,...)")
	fs.StringVar(&s.TLS.CA, "etcd-ca-file", "", "etcd mode: CA bundle that signs etcd's server certificates")
	fs.StringVar(&s.TLS.Cert, "etcd-cert-file", "", "etcd mode: client certificate for etcd (with --etcd-key-file)")
	fs.StringVar(&s.TLS.Key, "etcd-key-file", "", "etcd mode: client certificate's private key")
	fs.StringVar(&s.Username, "etcd-username", "", "etcd mode: etcd user to authenticate as (etcd auth enabled), with --etcd-password-file or $"+etcd.PasswordEnv)
	fs.StringVar(&s.PasswordFile, "etcd-password-file", "", "etcd mode: file holding the etcd user's password (never on the command line)")
	fs.StringVar(&s.Prefix, "etcd-prefix", s.Prefix, "etcd mode: key prefix of this lanleader cluster (election and job ledger)")
	fs.DurationVar(&s.SessionTTL, "etcd-session-ttl", s.SessionTTL, "etcd mode: lease TTL, whole seconds: how long a dead leader holds on")
}

// Load merges election.etcd of the file (flags given win) and validates.
func (s *settings) Load(src *cli.Source) error {
	var f fileSettings
	if _, err := src.Decode(Name, &f); err != nil {
		return err
	}
	set := func(flag string, apply func()) {
		if !src.Changed(flag) {
			apply()
		}
	}
	if len(f.Endpoints) > 0 {
		set("etcd-endpoints", func() { s.Endpoints = f.Endpoints })
	}
	for _, p := range []struct {
		flag string
		dst  *string
		v    string
	}{{"etcd-ca-file", &s.TLS.CA, f.CAFile}, {"etcd-cert-file", &s.TLS.Cert, f.CertFile},
		{"etcd-key-file", &s.TLS.Key, f.KeyFile}, {"etcd-prefix", &s.Prefix, f.Prefix},
		{"etcd-username", &s.Username, f.Username}, {"etcd-password-file", &s.PasswordFile, f.PasswordFile}} {
		if p.v != "" {
			set(p.flag, func() { *p.dst = p.v })
		}
	}
	if f.SessionTTL != 0 {
		set("etcd-session-ttl", func() { s.SessionTTL = f.SessionTTL })
	}
	s.password = s.env.take()
	// The node id is the core's setting, checked there.
	err := s.config("-").Validate()
	var errs []error
	for _, e := range unjoin(err) {
		var fe *etcd.FieldError
		if errors.As(e, &fe) && flagOf[fe.Field] != "" {
			errs = append(errs, src.Problem(Name+"."+fe.Field, flagOf[fe.Field], "%v", fe.Err))
			continue
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// config is the elector's config for node.
func (s *settings) config(node string) etcd.Config {
	return etcd.Config{
		NodeID:       node,
		Endpoints:    s.Endpoints,
		TLS:          s.TLS,
		Username:     s.Username,
		Password:     s.password,
		PasswordFile: s.PasswordFile,
		Prefix:       s.Prefix,
		SessionTTL:   s.SessionTTL,
	}
}

// Succession is etcd.SuccessionFor the session TTL: a successor waits for
// a deposed leader's runs for the TTL too.
func (s *settings) Succession() election.Succession { return etcd.SuccessionFor(s.SessionTTL) }

// New builds the Elector and the etcd ledger, hooked to the job runner: a
// new leader reads the ledger into the runner before it schedules, every
// run's entry is committed before its process starts (the runner's start
// gate), and other ledger changes (outcomes) are written back after, all
// under the leader key.
func (s *settings) New(env cli.Env) (*cli.Elector, error) {
	cfg := s.config(env.NodeID)
	cfg.Logger = env.Logger
	el, err := etcd.New(cfg)
	var fe *etcd.FieldError
	switch {
	case errors.As(err, &fe) && flagOf[fe.Field] != "":
		return nil, cli.ConfigError{Err: fmt.Errorf("--%s (election.etcd.%s): %w", flagOf[fe.Field], fe.Field, fe.Err)}
	case err != nil:
		return nil, err
	}
	ledger := etcd.NewLedger(el, etcd.LedgerConfig{
		Adopt: func(b []byte) error {
			env.AdoptLedger("", jobs.SaysNoHolds, b)
			return nil
		},
		Current: env.StateLedger,
		Logger:  env.Logger,
	})
	env.Logger.Info("etcd mode", "endpoints", strings.Join(s.Endpoints, ","), "prefix", s.Prefix,
		"session_ttl", s.SessionTTL, "tls", s.TLS != (etcd.TLSFiles{}), "user", s.Username)
	return &cli.Elector{
		Elector: loginChecked{el},
		Cluster: cluster{el: el, ledger: ledger},
		Flush:   ledger.Flush,
		View:    func() any { return el.View() },
	}, nil
}

// cluster is etcd mode as the job runner's jobs.Cluster: the guard is the
// elector's lease; every run's entry is in etcd, under this leadership,
// before its process starts (Ledger.Commit); a changed ledger is written
// back (Ledger.Sync); a new leader reads the ledger before it schedules
// (NewLedger hooks it), so it needs no gathering window, and it waits for
// a deposed leader's runs for the session TTL (Succession).
type cluster struct {
	el     *etcd.Elector
	ledger *etcd.Ledger
}

func (c cluster) MayAct() bool { return c.el.CanActAsLeader() }

func (c cluster) Commit(ctx context.Context, name string, e jobs.LedgerEntry) error {
	return c.ledger.Commit(ctx, name, e)
}

func (c cluster) Publish() { c.ledger.Sync() }

// SetHolding: a deposed etcd leader's runs are waited for by Succession,
// not by its word.
func (c cluster) SetHolding(bool) {}

func (c cluster) Timing() jobs.ClusterTiming {
	return jobs.ClusterTiming{Succession: c.el.Succession()}
}

// loginChecked is the Elector whose Run, when etcd rejects the
// credentials as it logs in, ends run with exit code 3 like any other
// invalid setting, naming the settings to check. An unreachable etcd is no
// such error: Run keeps trying.
type loginChecked struct{ *etcd.Elector }

func (l loginChecked) Run(ctx context.Context, cb election.Callbacks) error {
	err := l.Elector.Run(ctx, cb)
	if errors.Is(err, etcd.ErrCredentialsRejected) {
		return cli.ConfigError{Err: fmt.Errorf("%w; check --etcd-username (election.etcd.username) and the password from --etcd-password-file (election.etcd.password_file) or %s", err, etcd.PasswordEnv)}
	}
	return err
}

// envPassword holds $LANLEADER_ETCD_PASSWORD once taken from the
// process's environment: removed there, so the jobs' processes (which
// inherit it) do not see it, and kept here for a reload.
type envPassword struct {
	mu sync.Mutex
	v  string
}

// take returns the variable's value and removes it from the environment;
// once it is gone, the value taken last. Setting it again, even to "",
// replaces the value.
func (p *envPassword) take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := os.LookupEnv(etcd.PasswordEnv); ok {
		p.v = v
		os.Unsetenv(etcd.PasswordEnv)
	}
	return p.v
}

// unjoin returns the errors joined in err (errors.Join), or err alone.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
