package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/election"
)

// BeforeLeading is called when a node has won the election under term,
// before its leadership is reported. An error gives the leadership up.
type BeforeLeading func(ctx context.Context, term uint64) error

// Elector is the etcd election mode's election.Elector.
type Elector struct {
	cfg Config
	log *slog.Logger
	// client is Config.Client, or the client Run dialed (connect); only
	// Run sets it, before its sessions start. Others read it with mu held
	// (Client).
	client *clientv3.Client
	// dialCfg is the client's config when Config.Client is nil: Run dials
	// it, and closes the client when it returns.
	dialCfg *clientv3.Config
	now     clock
	// wait waits for d or until ctx is done, between attempts to reach
	// etcd; tests replace it.
	wait func(ctx context.Context, d time.Duration)

	mu      sync.Mutex
	started bool
	n       *election.Notifier
	// lead is the current leadership; nil while not leading.
	lead *leadership
	// beforeLeading is cfg.BeforeLeading, or what SetBeforeLeading set.
	beforeLeading BeforeLeading
}

// leadership is what this node holds while it leads.
type leadership struct {
	key   string
	term  uint64
	lease *leaseClock
}

var _ election.Elector = (*Elector)(nil)

// New validates cfg, reads its TLS and password files and returns an
// Elector. It does not touch the network: Run dials etcd (unless cfg.Client
// is set), with or without a Username, and keeps trying while etcd is
// unreachable.
func New(cfg Config) (*Elector, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Elector{cfg: cfg, log: cfg.Logger, client: cfg.Client, now: systemClock, wait: sleep, beforeLeading: cfg.BeforeLeading}
	if e.client == nil {
		cc, err := cfg.clientConfig()
		if err != nil {
			return nil, err
		}
		e.dialCfg = &cc
	}
	return e, nil
}

// Client returns the etcd client the Elector uses: Config.Client, or the
// one Run dialed; nil before Run has reached etcd.
func (e *Elector) Client() *clientv3.Client {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.client
}

// endpoints returns the client's endpoints, or the configured ones before
// Run has dialed.
func (e *Elector) endpoints() []string {
	if c := e.Client(); c != nil {
		return c.Endpoints()
	}
	return e.cfg.Endpoints
}

// Prefix returns the cluster's key prefix (without a trailing slash).
func (e *Elector) Prefix() string { return e.cfg.Prefix }

// SetBeforeLeading replaces Config.BeforeLeading; call it before Run. It
// lets a Ledger built on this Elector hook its TakeOver in.
func (e *Elector) SetBeforeLeading(f BeforeLeading) {
	e.mu.Lock()
	e.beforeLeading = f
	e.mu.Unlock()
}

// CanActAsLeader reports whether this node leads and its lease is certainly
// still alive by the local clock (with Config.Margin to spare). It turns
// false on its own when keepalives stop being answered, before etcd could
// expire the lease and elect another node. The job runner asks it before
// every start.
func (e *Elector) CanActAsLeader() bool {
	e.mu.Lock()
	l := e.lead
	e.mu.Unlock()
	return l != nil && l.lease.remaining() > 0
}

// Succession returns what this elector promises about a deposed leader:
// SuccessionFor its session TTL.
func (e *Elector) Succession() election.Succession { return SuccessionFor(e.cfg.SessionTTL) }

// SuccessionFor returns what etcd mode with session TTL ttl promises about
// a deposed leader (election.Succession): it stops acting within ttl of
// its successor's start. A lease that expires elects the successor only
// after the old leader's own deadline, but a leader key deleted or a lease
// revoked by hand elects it at once, and the old leader may act until its
// last renewal from before that runs out (keepAlive).
func SuccessionFor(ttl time.Duration) election.Succession {
	return election.Succession{Bounded: true, Overhang: ttl}
}

// leading returns the current leadership if it holds term and its lease is
// certainly alive, with how long it remains so.
func (e *Elector) leading(term uint64) (key string, remaining time.Duration, ok bool) {
	e.mu.Lock()
	l := e.lead
	e.mu.Unlock()
	if l == nil || l.term != term {
		return "", 0, false
	}
	r := l.lease.remaining()
	return l.key, r, r > 0
}

// Status returns this node's view of the election.
func (e *Elector) Status() election.Status {
	e.mu.Lock()
	n := e.n
	e.mu.Unlock()
	if n == nil {
		return e.idle()
	}
	return n.Status()
}

func (e *Elector) idle() election.Status {
	return election.Status{Node: e.cfg.NodeID, Role: election.Follower}
}

// Run campaigns until ctx is done, one session (lease) at a time: when a
// session ends (lease expired or revoked, etcd unreachable past the
// deadline) any leadership ends with it, and a new session campaigns
// again after a short pause (SessionTTL/10). Before the first session,
// while etcd is unreachable, it says so at WARN and tries again with
// backoff (connect). When ctx is done a leader resigns, so another node
// takes over at once, and revokes its lease.
//
// Run returns nil when ctx is done, or an error wrapping
// ErrCredentialsRejected, at once, if etcd refuses Config.Username's
// password when Run logs in.
func (e *Elector) Run(ctx context.Context, cb election.Callbacks) error {
	n := election.NewNotifier(ctx, cb, e.idle())
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return errors.New("etcd: Run called twice")
	}
	e.started, e.n = true, n
	e.mu.Unlock()
	e.log.Info("etcd election", "endpoints", e.endpoints(), "prefix", e.cfg.Prefix,
		"session_ttl", e.cfg.SessionTTL, "margin", e.cfg.Margin, "user", e.cfg.Username)
	err := e.campaign(ctx, n)
	final := n.Status()
	final.Role, final.Since = election.Follower, time.Now()
	n.Stop(final)
	if e.dialCfg != nil && e.client != nil {
		e.client.Close()
	}
	return err
}

// campaign reaches etcd (connect, unless Config.Client is set), then runs
// sessions until ctx is done.
func (e *Elector) campaign(ctx context.Context, n *election.Notifier) error {
	if e.dialCfg != nil {
		if err := e.connect(ctx); err != nil || e.client == nil {
			return err
		}
	}
	pause := e.cfg.SessionTTL / 10
	for ctx.Err() == nil {
		err := e.session(ctx, n)
		if ctx.Err() != nil {
			break
		}
		e.log.Warn("etcd: session ended; campaigning again", "err", err, "after", pause)
		e.wait(ctx, pause)
	}
	return nil
}

// errLeaseDeadline, errLeaderKeyGone and errNotFirst end a session.
var (
	errLeaseDeadline = errors.New("lease may have expired: no keepalive answered in time")
	errLeaderKeyGone = errors.New("this node's leader key was deleted")
	errNotFirst      = fmt.Errorf("campaign returned but this node's key is not the leader (its session ended)")
)
