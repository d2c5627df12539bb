package udp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
	"github.com/lanleader/lanleader/internal/proctest"
)

// whoTransport opens the transport `lanleader who` opens: unicast to the
// cluster's peer list, from a port the kernel picks.
func whoTransport(t *testing.T, peers []string) *udp.UDPTransport {
	t.Helper()
	tr, err := udp.NewUDPTransport(udp.UDPConfig{Bind: "127.0.0.1", ListenPort: udp.AnyPort, Peers: peers, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	return tr
}

func (c *loopback) peers() []string {
	var out []string
	for _, nd := range c.nodes {
		out = append(out, nd.tr.LocalAddr().String())
	}
	return out
}

// query runs udp.Query in the background, so a test can end it (cancel)
// once it has seen what it waits for instead of sitting out a timeout.
type query struct {
	cancel  context.CancelFunc
	done    chan struct{}
	answers []udp.Answer
	err     error
}

// startQuery asks on tr until ctx ends; cancel must end ctx.
func startQuery(ctx context.Context, cancel context.CancelFunc, tr udp.Transport, cluster string, kr *wire.Keyring) *query {
	q := &query{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(q.done)
		q.answers, q.err = udp.Query(ctx, tr, cluster, kr)
	}()
	return q
}

// wait waits (boundedly) for Query to return.
func (q *query) wait(t *testing.T) ([]udp.Answer, error) {
	t.Helper()
	defer q.cancel()
	select {
	case <-q.done:
		return q.answers, q.err
	case <-time.After(2 * patience):
		require.FailNow(t, "Query did not return after its context ended")
		return nil, nil
	}
}

// answerTap passes a real transport through to Query and cancels the query
// once it has handed over an ANSWER: the hand-over is unbuffered, so Query
// holds the answer before its context ends. Query's loop is unchanged.
type answerTap struct {
	udp.Transport
	out  chan udp.Packet
	quit chan struct{}
	wg   sync.WaitGroup
}

func tapAnswers(inner udp.Transport, kr *wire.Keyring, onAnswer func()) *answerTap {
	a := &answerTap{Transport: inner, out: make(chan udp.Packet), quit: make(chan struct{})}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(a.out)
		for p := range inner.Packets() {
			select {
			case a.out <- p:
			case <-a.quit:
				return
			}
			if m, err := wire.Decode(p.Data, kr); err == nil && m.Type == protocol.Answer {
				onAnswer()
			}
		}
	}()
	return a
}

func (a *answerTap) Packets() <-chan udp.Packet { return a.out }

// stop ends the tap; the inner transport is closed by its own cleanup.
func (a *answerTap) stop() {
	close(a.quit)
	a.Transport.Close()
	a.wg.Wait()
}

func TestWhoOverLoopback(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	kr, err := wire.NewKeyring([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	otherKr, err := wire.NewKeyring([]byte("fedcba9876543210fedcba9876543210"))
	require.NoError(t, err)
	c := newLoopback(t, loopOptions{n: 3, keyring: kr})
	defer c.stopAll()
	leader := c.waitAgreement()

	t.Run("finds the leader", func(t *testing.T) {
		answersBefore := leader.elector.Stats().Sent[protocol.Answer]
		tr := whoTransport(t, c.peers())
		assert.NotZero(t, tr.LocalAddr().Port(), "AnyPort bound a real port")
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		tap := tapAnswers(tr, kr, cancel)
		q := startQuery(ctx, cancel, tap, loopCluster, kr)
		answers, err := q.wait(t)
		tap.stop()

		require.NoError(t, err)
		want := leader.elector.Status().Leader
		require.Len(t, answers, 1, "one leader answered")
		assert.Equal(t, leader.id, answers[0].Leader)
		assert.Equal(t, want.Term, answers[0].Term, "the leader's term")
		assert.Equal(t, leader.tr.LocalAddr().String(), answers[0].Addr, "the leader's address")
		assert.Equal(t, answersBefore+1, leader.elector.Stats().Sent[protocol.Answer], "only the leader answers, once")
		for _, nd := range c.nodes {
			if nd != leader {
				assert.Zero(t, nd.elector.Stats().Sent[protocol.Answer], "%s follows and does not answer", nd.id)
			}
		}
	})

	// A query the cluster must ignore gets no answer. Each case waits until
	// every node has counted the query as dropped, then ends it: no answer
	// can be in flight, so the empty result is not a lucky early timeout.
	tests := []struct {
		name    string
		cluster string
		keyring *wire.Keyring
		counted string // the OnPacket key every node counts the query as
	}{
		{name: "other cluster name", cluster: "other", keyring: kr, counted: "query/other_cluster"},
		{name: "wrong key", cluster: loopCluster, keyring: otherKr, counted: "unknown/bad_mac"},
		{name: "no key", cluster: loopCluster, keyring: nil, counted: "unknown/unsigned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answersBefore := leader.elector.Stats().Sent[protocol.Answer]
			counts := make(map[*loopNode]int)
			for _, nd := range c.nodes {
				counts[nd] = nd.count(tt.counted)
			}
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			q := startQuery(ctx, cancel, whoTransport(t, c.peers()), tt.cluster, tt.keyring)
			for _, nd := range c.nodes {
				require.Eventually(t, func() bool { return nd.count(tt.counted) > counts[nd] },
					patience, pollTick, "%s never counted the query as %s", nd.id, tt.counted)
			}
			q.cancel()
			answers, err := q.wait(t)
			require.NoError(t, err)
			assert.Empty(t, answers)
			assert.Equal(t, answersBefore, leader.elector.Stats().Sent[protocol.Answer], "the leader sent no answer")
		})
	}
}

func TestWhoWithNoClusterRunning(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	var peers []string
	for _, p := range loopPorts(t, 3) { // closed again: nobody listens there
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", p))
	}
	tr := whoTransport(t, peers)
	defer tr.Close() // before goleak's check, which runs ahead of t.Cleanup
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	var answers []udp.Answer
	var err error
	go func() {
		defer close(done)
		answers, err = udp.Query(ctx, tr, loopCluster, nil)
	}()
	select {
	case <-done:
	case <-time.After(patience):
		require.FailNow(t, "Query did not return after its timeout")
	}
	require.NoError(t, err, "silence is no answer, not an error")
	assert.Empty(t, answers)
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, "Query listened until its timeout")
}
