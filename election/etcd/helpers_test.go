package etcd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

// testTTL is the session TTL of the tests: small, so expiry tests are
// quick, and still three keepalive rounds.
const testTTL = 2 * time.Second

// tenure is one leadership of one node, on the elector's clock.
type tenure struct {
	node       string
	term       uint64
	start      time.Duration
	stop       time.Duration // zero while leading
	canActStop bool          // CanActAsLeader when OnStoppedLeading ran
}

// cluster is several electors of one prefix in this process, and the
// history of their leaderships.
type cluster struct {
	t      *testing.T
	prefix string

	mu      sync.Mutex
	tenures []*tenure
	changed chan struct{} // closed and replaced on every callback
}

func newCluster(t *testing.T) *cluster {
	return &cluster{t: t, prefix: "/test/" + t.Name(), changed: make(chan struct{})}
}

// node is one elector of a cluster.
type node struct {
	id     string
	el     *Elector
	client *clientv3.Client
	proxy  *etcdtest.Proxy // nil unless started with viaProxy
	cancel context.CancelFunc
	done   chan struct{}
}

// start starts an elector named id, talking to etcd directly.
func (c *cluster) start(id string) *node { return c.startWith(id, false, nil, nil) }

// startProxied starts an elector named id that talks to etcd through a
// proxy the test can cut.
func (c *cluster) startProxied(id string) *node { return c.startWith(id, true, nil, nil) }

// startWith starts an elector named id; edit, if not nil, changes its
// config first, and setup, if not nil, is called before Run.
func (c *cluster) startWith(id string, proxied bool, edit func(*Config), setup func(*node)) *node {
	t := c.t
	n := &node{id: id, done: make(chan struct{})}
	endpoint := server.Endpoint
	if proxied {
		p, err := etcdtest.NewProxy(server.Endpoint)
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		n.proxy, endpoint = p, p.Endpoint
	}
	client, err := etcdtest.NewClient(endpoint)
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	n.client = client
	cfg := Config{NodeID: id, Client: client, Prefix: c.prefix, SessionTTL: testTTL, Logger: testLogger(t, id)}
	if edit != nil {
		edit(&cfg)
	}
	n.el, err = New(cfg)
	require.NoError(t, err)
	if setup != nil {
		setup(n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() {
		defer close(n.done)
		require.NoError(t, n.el.Run(ctx, c.callbacks(n)))
	}()
	t.Cleanup(n.stop)
	return n
}

// stop stops the node's Run and waits for it.
func (n *node) stop() {
	n.cancel()
	<-n.done
}

func (c *cluster) callbacks(n *node) election.Callbacks {
	var cur *tenure
	return election.Callbacks{
		OnStartedLeading: func(_ context.Context, term uint64) {
			cur = &tenure{node: n.id, term: term, start: systemClock()}
			c.record(func() { c.tenures = append(c.tenures, cur) })
		},
		OnStoppedLeading: func() {
			at, canAct := systemClock(), n.el.CanActAsLeader()
			c.record(func() { cur.stop, cur.canActStop = at, canAct })
		},
	}
}

func (c *cluster) record(f func()) {
	c.mu.Lock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// waitFor waits, up to limit, until cond holds on the tenures; it is
// re-checked after every callback.
func (c *cluster) waitFor(limit time.Duration, what string, cond func(ts []tenure) bool) []tenure {
	c.t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		ts := c.snapshot()
		if cond(ts) {
			return ts
		}
		select {
		case <-ch:
		case <-deadline.C:
			c.t.Fatalf("after %s: still not %s; tenures: %s", limit, what, formatTenures(ts))
		}
	}
}

// snapshot returns a copy of the tenures so far.
func (c *cluster) snapshot() []tenure {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := make([]tenure, len(c.tenures))
	for i, p := range c.tenures {
		ts[i] = *p
	}
	return ts
}

// leading returns the tenures still open.
func leading(ts []tenure) []tenure {
	var out []tenure
	for _, t := range ts {
		if t.stop == 0 {
			out = append(out, t)
		}
	}
	return out
}

// oneLeader waits until exactly one node leads and returns its tenure.
func (c *cluster) oneLeader(limit time.Duration, not ...string) tenure {
	c.t.Helper()
	ts := c.waitFor(limit, "one leader", func(ts []tenure) bool {
		l := leading(ts)
		return len(l) == 1 && !contains(not, l[0].node)
	})
	return leading(ts)[0]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkExclusive fails if two tenures overlapped in time, terms did not
// grow from one tenure to the next, or a stopped leader could still act.
func (c *cluster) checkExclusive() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, a := range c.tenures {
		if a.stop != 0 && a.canActStop {
			c.t.Errorf("%s could still act as leader when its leadership (term %d) stopped", a.node, a.term)
		}
		if i == 0 {
			continue
		}
		prev := c.tenures[i-1]
		if a.term <= prev.term {
			c.t.Errorf("term did not grow: %s term %d after %s term %d", a.node, a.term, prev.node, prev.term)
		}
		if prev.stop == 0 || prev.stop > a.start {
			c.t.Errorf("%s (term %d) started leading while %s (term %d) still led; tenures: %s",
				a.node, a.term, prev.node, prev.term, formatTenuresP(c.tenures))
		}
	}
}

func formatTenuresP(ps []*tenure) string {
	ts := make([]tenure, len(ps))
	for i, p := range ps {
		ts[i] = *p
	}
	return formatTenures(ts)
}

func formatTenures(ts []tenure) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "[%s term %d from %v to %v] ", t.node, t.term, t.start, t.stop)
	}
	return b.String()
}

// testLogger logs to the test's output only with -v; otherwise discards.
func testLogger(t *testing.T, id string) *slog.Logger {
	if !testing.Verbose() {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", id)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// leaderKV returns the election's current leader key.
func (c *cluster) leaderKV(client *clientv3.Client) (key string, createRev int64, lease clientv3.LeaseID) {
	c.t.Helper()
	resp, err := client.Get(context.Background(), c.prefix+"/election/", clientv3.WithFirstCreate()...)
	require.NoError(c.t, err)
	require.NotEmpty(c.t, resp.Kvs, "no leader key under %s", c.prefix)
	kv := resp.Kvs[0]
	return string(kv.Key), kv.CreateRevision, clientv3.LeaseID(kv.Lease)
}

// keys returns the election's keys, oldest first.
func keys(t *testing.T, c *cluster, n *node) []string {
	t.Helper()
	resp, err := n.client.Get(context.Background(), c.prefix+"/election/", clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	require.NoError(t, err)
	out := make([]string, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		out[i] = string(kv.Key)
	}
	return out
}

// lastKey returns the newest election key.
func lastKey(t *testing.T, c *cluster, n *node) string {
	t.Helper()
	ks := keys(t, c, n)
	require.NotEmpty(t, ks)
	return ks[len(ks)-1]
}

// waitKeys waits until the election has want keys (nodes in line).
func waitKeys(t *testing.T, c *cluster, n *node, want int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(keys(t, c, n)) == want }, 10*time.Second, 10*time.Millisecond,
		"election keys: %v", keys(t, c, n))
}
