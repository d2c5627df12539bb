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
	cfg    Config
	log    *slog.Logger
	client *clientv3.Client
	// ownClient is set when New dialed the client, so Run closes it.
	ownClient bool
	now       clock

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

// New validates cfg and returns an Elector. It dials etcd unless cfg.Client
// is set, without waiting for a connection.
func New(cfg Config) (*Elector, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Elector{cfg: cfg, log: cfg.Logger, client: cfg.Client, now: systemClock, beforeLeading: cfg.BeforeLeading}
	if e.client == nil {
		c, err := NewClient(cfg)
		if err != nil {
			return nil, err
		}
		e.client, e.ownClient = c, true
	}
	return e, nil
}

// Client returns the etcd client the Elector uses.
func (e *Elector) Client() *clientv3.Client { return e.client }

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
// again after a short pause. When ctx is done a leader resigns, so another
// node takes over at once, and revokes its lease.
func (e *Elector) Run(ctx context.Context, cb election.Callbacks) error {
	n := election.NewNotifier(ctx, cb, e.idle())
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return errors.New("etcd: Run called twice")
	}
	e.started, e.n = true, n
	e.mu.Unlock()
	if e.ownClient {
		defer e.client.Close()
	}
	e.log.Info("etcd election", "endpoints", e.client.Endpoints(), "prefix", e.cfg.Prefix,
		"session_ttl", e.cfg.SessionTTL, "margin", e.cfg.Margin, "user", e.cfg.Username)

	pause := e.cfg.SessionTTL / 10
	for ctx.Err() == nil {
		err := e.session(ctx, n)
		if ctx.Err() != nil {
			break
		}
		e.log.Warn("etcd: session ended; campaigning again", "err", err, "after", pause)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	final := n.Status()
	final.Role, final.Since = election.Follower, time.Now()
	n.Stop(final)
	return nil
}

// errLeaseDeadline, errLeaderKeyGone and errNotFirst end a session.
var (
	errLeaseDeadline = errors.New("lease may have expired: no keepalive answered in time")
	errLeaderKeyGone = errors.New("this node's leader key was deleted")
	errNotFirst      = fmt.Errorf("campaign returned but this node's key is not the leader (its session ended)")
)
