package trigger_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/udpjobs"
	"github.com/lanleader/lanleader/election/udp/wire"
	"github.com/lanleader/lanleader/jobs"
	"github.com/lanleader/lanleader/trigger"
)

// node is one in-process lanleader node wired as the daemon wires it: a
// udp elector on memnet, a job runner, and the trigger handler.
type node struct {
	id     string
	el     *udp.Elector
	runner *jobs.Runner
	stop   func()
}

func startNode(t *testing.T, n *memnet.Network, i int, key *wire.Keyring, setup func(*trigger.Handler)) *node {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	nd := &node{id: fmt.Sprintf("n%d", i)}
	var err error
	h := &trigger.Handler{Logger: quiet}
	if setup != nil {
		setup(h)
	}
	pc := protocol.DefaultLANConfig()
	pc.NodeID, pc.Cluster = nd.id, "trig"
	pc.Priority = uint8(200 - i)
	pc.Rand = rand.New(rand.NewPCG(uint64(i), 3))
	nd.el, err = udp.New(udp.Config{
		Protocol: pc, Transport: n.Join(netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i))),
		Keyring: key, Logger: quiet, Payload: func() []byte { return nd.runner.Ledger() },
		OnPayload: func(h protocol.PeerPayload) error {
			return nd.runner.AdoptLedgerFrom(h.From, udpjobs.HoldWordOf(h), h.Payload)
		},
		OnRequest: func(r udp.ClientRequest) []byte {
			return h.Handle(trigger.Sender{ID: r.From, Addr: r.Addr.String()}, r.Payload)
		},
	})
	require.NoError(t, err)
	nd.runner, err = jobs.NewRunner(udpjobs.Cluster(nd.el), jobs.RunnerConfig{Node: nd.id, Logger: quiet, Jobs: []jobs.Spec{
		{Name: "hello", Schedule: "0 0 1 1 *", Shell: "exit 0"},
		{Name: "fails", Schedule: "0 0 1 1 *", Shell: "exit 7"},
	}})
	require.NoError(t, err)
	h.Runner = nd.runner
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = nd.el.Run(ctx, nd.runner.Callbacks())
		_ = nd.runner.Wait(context.Background())
	})
	nd.stop = func() { cancel(); wg.Wait() }
	return nd
}

// manualRuns counts the manual runs node made itself.
func manualRuns(nd *node, job string) int {
	n := 0
	for _, r := range nd.runner.History().Runs(job, 0) {
		if r.Manual && !r.Heard {
			n++
		}
	}
	return n
}

type cluster struct {
	net   *memnet.Network
	nodes []*node
}

func newCluster(t *testing.T, key *wire.Keyring) *cluster {
	return newClusterWith(t, key, nil)
}

// newClusterWith is newCluster with each node's Handler set up by setup.
func newClusterWith(t *testing.T, key *wire.Keyring, setup func(*trigger.Handler)) *cluster {
	c := &cluster{net: memnet.New(memnet.WithSeed(9))}
	for i := 1; i <= 3; i++ {
		c.nodes = append(c.nodes, startNode(t, c.net, i, key, setup))
	}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			nd.stop()
		}
	})
	require.Eventually(t, func() bool { return c.leader() != nil }, eventWait, 10*time.Millisecond)
	return c
}

func (c *cluster) leader() *node {
	for _, nd := range c.nodes {
		if nd.el.Status().IsLeader() {
			return nd
		}
	}
	return nil
}

// These bound waits in real time. An answer or a run that must come is
// given eventWait: a loaded machine may be slow, and the bound is never
// waited out when the test passes. A request that must get no answer is
// given silenceWait.
const (
	eventWait   = 20 * time.Second
	silenceWait = 500 * time.Millisecond
)

// client is a host that is not a node: it only sends requests, and waits
// eventWait for the answer.
func (c *cluster) client(t *testing.T, key *wire.Keyring, op trigger.Op, name string) (trigger.Answer, error) {
	t.Helper()
	return c.clientWithin(t, key, op, name, eventWait)
}

// clientWithin is client that waits at most d for the answer.
func (c *cluster) clientWithin(t *testing.T, key *wire.Keyring, op trigger.Op, name string, d time.Duration) (trigger.Answer, error) {
	t.Helper()
	tr := c.net.Join(netip.MustParseAddrPort("198.18.0.200:40000"))
	defer tr.Close()
	return c.clientOn(t, tr, key, op, name, d)
}

// clientOn is client on tr: it sends as `lanleader trigger` does, each
// Repeatable request again on udp.DefaultResend while no answer came.
func (c *cluster) clientOn(t *testing.T, tr udp.Transport, key *wire.Keyring, op trigger.Op, name string, d time.Duration) (trigger.Answer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	send := func(ctx context.Context, p []byte, repeat bool) ([]byte, bool, error) {
		resend := udp.Resend{}
		if repeat {
			resend = udp.DefaultResend
		}
		ra, err := udp.Request(ctx, tr, "trig", key, p, resend)
		if err == nil {
			if l := c.leader(); assert.NotNil(t, l) {
				assert.Equal(t, l.id, ra.Leader, "the leader answers")
			}
		}
		return ra.Payload, ra.Send == 1, err
	}
	if op == trigger.OpStatus {
		return trigger.Status(ctx, send, name)
	}
	return trigger.RunJob(ctx, send, name)
}

// Run now from a host that is not a node: the leader runs the job once,
// answers with the run id, and reports the outcome when asked.
func TestTriggerRunsOnceOnTheLeader(t *testing.T) {
	c := newCluster(t, nil)
	a, err := c.client(t, nil, trigger.OpRun, "fails")
	require.NoError(t, err)
	require.Equal(t, trigger.Started, a.Code, a.Message)
	require.NotEmpty(t, a.RunID)
	leader := c.leader()
	require.Eventually(t, func() bool { return manualRuns(leader, "fails") == 1 }, eventWait, 10*time.Millisecond)
	for _, nd := range c.nodes {
		if nd != leader {
			assert.Zero(t, manualRuns(nd, "fails"), "%s is not the leader and ran nothing", nd.id)
		}
	}
	st, err := c.client(t, nil, trigger.OpStatus, a.RunID)
	require.NoError(t, err)
	assert.Equal(t, trigger.Finished, st.Code)
	assert.Equal(t, jobs.OutcomeFailed, st.Outcome)
	assert.Equal(t, 7, st.ExitCode)

	a, err = c.client(t, nil, trigger.OpRun, "nope")
	require.NoError(t, err)
	assert.Equal(t, trigger.UnknownJob, a.Code)
	st, err = c.client(t, nil, trigger.OpStatus, "0123456789abcdef")
	require.NoError(t, err)
	assert.Equal(t, trigger.UnknownRun, st.Code)
	assert.Equal(t, 1, manualRuns(leader, "fails"), "still exactly one run")
}

// A keyed cluster ignores a request without the key (no answer, no run)
// and serves one with it.
func TestTriggerRefusedWithoutKey(t *testing.T) {
	key, err := wire.NewKeyring(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	wrong, err := wire.NewKeyring(bytes.Repeat([]byte{8}, 32))
	require.NoError(t, err)
	c := newCluster(t, key)
	for name, k := range map[string]*wire.Keyring{"no key": nil, "wrong key": wrong} {
		_, err := c.clientWithin(t, k, trigger.OpRun, "hello", silenceWait)
		assert.ErrorIs(t, err, context.DeadlineExceeded, name)
	}
	for _, nd := range c.nodes {
		assert.Zero(t, manualRuns(nd, "hello"))
	}
	a, err := c.client(t, key, trigger.OpRun, "hello")
	require.NoError(t, err)
	assert.Equal(t, trigger.Started, a.Code)
	leader := c.leader()
	require.Eventually(t, func() bool { return manualRuns(leader, "hello") == 1 }, eventWait, 10*time.Millisecond)
}

// Issue 25 item 5: with no key, a node that does not opt in refuses every
// request (any device on the LAN could send one): the client is told why,
// nothing runs, and the leader names the sender and the fix at WARN.
func TestTriggerRefusedWhenTheClusterHasNoKey(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	c := newClusterWith(t, nil, func(h *trigger.Handler) {
		h.Refuse = true
		h.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	})
	for _, op := range []trigger.Op{trigger.OpRun, trigger.OpStatus} {
		a, err := c.client(t, nil, op, "hello")
		require.NoError(t, err)
		assert.Equal(t, trigger.Refused, a.Code)
		assert.Equal(t, trigger.RefusedMessage, a.Message)
	}
	for _, nd := range c.nodes {
		assert.Zero(t, manualRuns(nd, "hello"), "%s ran nothing", nd.id)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	assert.Contains(t, out, `level=WARN msg="trigger: refused a request: this cluster has no key`)
	assert.Regexp(t, `from=trigger-[0-9a-f]{8} addr=198\.18\.0\.200:40000 job=hello`, out, "names the sender")
	assert.Contains(t, out, "lanleader keygen")
	assert.Contains(t, out, "election.trigger_without_key: true")
	assert.Equal(t, 1, strings.Count(out, "refused a request"), "one line per 10 s, however many requests")
}

// lockedWriter serializes writes of several nodes' loggers.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Captured requests sent again run nothing: not on the leader (its ticket
// is used), and not on the next leader after a failover (every node
// remembered them, and the new leader never issued the ticket).
func TestTriggerReplayRunsNothing(t *testing.T) {
	c := newCluster(t, nil)
	sniffer := c.net.Join(netip.MustParseAddrPort("198.18.0.201:7483"))
	defer sniffer.Close()
	a, err := c.client(t, nil, trigger.OpRun, "hello")
	require.NoError(t, err)
	require.Equal(t, trigger.Started, a.Code)
	// The ticket request and the run request, and any resends of them
	// (memnet delivers during the send, so all are queued by now).
	var captured [][]byte
	ops := map[trigger.Op]bool{}
	require.Eventually(t, func() bool {
		for {
			select {
			case p := <-sniffer.Packets():
				if m, err := wire.Decode(p.Data, nil); err == nil && m.Type == protocol.Trigger {
					captured = append(captured, p.Data)
					if r, err := trigger.DecodeRequest(m.Payload); err == nil {
						ops[r.Op] = true
					}
				}
			default:
				return ops[trigger.OpTicket] && ops[trigger.OpRun]
			}
		}
	}, eventWait, 5*time.Millisecond)
	replay := func() {
		for _, p := range captured {
			require.NoError(t, sniffer.Broadcast(p))
		}
	}
	first := c.leader()
	require.Eventually(t, func() bool { return manualRuns(first, "hello") == 1 }, eventWait, 10*time.Millisecond)

	// fresh sends a new request and waits for its run: the replays sent
	// before it have been handled by then (one node handles its packets in
	// order). A leader whose runner does not lead yet answers NotLeading
	// and runs nothing: ask again. A request is never given up on while
	// its answer may still come, or the run would be counted twice.
	fresh := func(leader *node, want int) {
		t.Helper()
		require.Eventually(t, func() bool {
			a, err := c.client(t, nil, trigger.OpRun, "fails")
			return err == nil && a.Code == trigger.Started
		}, 3*eventWait, 50*time.Millisecond, "the leader serves fresh requests")
		require.Eventually(t, func() bool { return manualRuns(leader, "fails") == want }, eventWait, 10*time.Millisecond)
	}
	replay()
	fresh(first, 1)
	assert.Equal(t, 1, manualRuns(first, "hello"), "the replay did not run again on the leader")

	// Fail over, then replay to the new leader, once it serves requests.
	first.stop()
	require.Eventually(t, func() bool { l := c.leader(); return l != nil && l != first }, eventWait, 10*time.Millisecond)
	second := c.leader()
	fresh(second, 1)
	replay()
	fresh(second, 2)
	assert.Equal(t, 1, manualRuns(first, "hello"), "the replay did not run again on the first leader")
	for _, nd := range c.nodes {
		if nd != first {
			assert.Zero(t, manualRuns(nd, "hello"), "the replay ran nothing on %s", nd.id)
		}
	}
}
