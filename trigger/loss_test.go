package trigger_test

import (
	"bytes"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
	"github.com/lanleader/lanleader/trigger"
)

// lossyClient is a client host's transport that loses the frames it is
// told to: the requests it sends that dropSend picks, and the answers it
// receives that dropAnswer picks (as a lossy link would, after the leader
// acted on the request).
type lossyClient struct {
	udp.Transport
	dropSend   func(m protocol.Message, r trigger.Request) bool
	dropAnswer func(a trigger.Answer) bool
	out        chan udp.Packet

	mu       sync.Mutex
	sent     []trigger.Request // every request sent, lost or not
	lostSent int
	lostAns  []trigger.Answer
}

func newLossyClient(inner udp.Transport, dropSend func(protocol.Message, trigger.Request) bool, dropAnswer func(trigger.Answer) bool) *lossyClient {
	l := &lossyClient{Transport: inner, dropSend: dropSend, dropAnswer: dropAnswer, out: make(chan udp.Packet, 256)}
	go func() {
		defer close(l.out)
		for p := range inner.Packets() {
			if m, err := wire.Decode(p.Data, nil); err == nil && m.Type == protocol.TriggerAnswer {
				if a, err := trigger.DecodeAnswer(m.Payload); err == nil && l.lose(a) {
					continue
				}
			}
			select {
			case l.out <- p:
			default: // a full queue loses the packet, as a socket's would
			}
		}
	}()
	return l
}

func (l *lossyClient) lose(a trigger.Answer) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropAnswer == nil || !l.dropAnswer(a) {
		return false
	}
	l.lostAns = append(l.lostAns, a)
	return true
}

func (l *lossyClient) Broadcast(b []byte) error {
	m, err := wire.Decode(b, nil)
	if err == nil && m.Type == protocol.Trigger {
		r, err := trigger.DecodeRequest(m.Payload)
		if err == nil {
			l.mu.Lock()
			l.sent = append(l.sent, r)
			lose := l.dropSend != nil && l.dropSend(m, r)
			if lose {
				l.lostSent++
			}
			l.mu.Unlock()
			if lose {
				return nil
			}
		}
	}
	return l.Transport.Broadcast(b)
}

func (l *lossyClient) Packets() <-chan udp.Packet { return l.out }

func (c *cluster) lossyClient(t *testing.T, dropSend func(protocol.Message, trigger.Request) bool, dropAnswer func(trigger.Answer) bool) *lossyClient {
	l := newLossyClient(c.net.Join(netip.MustParseAddrPort("198.18.0.200:40000")), dropSend, dropAnswer)
	t.Cleanup(func() { l.Close() })
	return l
}

// The first send of every request is lost (a link just up, a busy
// switch): the ticket request, the run request and the status request
// each get through on a resend, and the job runs once.
func TestTriggerSurvivesLostRequests(t *testing.T) {
	c := newCluster(t, nil)
	l := c.lossyClient(t, func(m protocol.Message, _ trigger.Request) bool { return m.Seq == 1 }, nil)
	a, err := c.clientOn(t, l, nil, trigger.OpRun, "fails", eventWait)
	require.NoError(t, err)
	require.Equal(t, trigger.Started, a.Code, a.Message)
	leader := c.leader()
	require.Eventually(t, func() bool { return manualRuns(leader, "fails") == 1 }, eventWait, 10*time.Millisecond)

	st, err := c.clientOn(t, l, nil, trigger.OpStatus, a.RunID, eventWait)
	require.NoError(t, err)
	assert.Equal(t, trigger.Finished, st.Code)
	assert.Equal(t, 7, st.ExitCode)
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Equal(t, 3, l.lostSent, "the first send of each of the three requests was lost")
	for _, nd := range c.nodes {
		want := 0
		if nd == leader {
			want = 1
		}
		assert.Equal(t, want, manualRuns(nd, "fails"), "%s", nd.id)
	}
}

// The leader starts the run and its answer is lost: the client resends
// the run request with the same ticket, and the leader answers with the
// run it started. A lost run answer never leads to two runs.
func TestTriggerLostRunAnswerRunsOnce(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	c := newClusterWith(t, nil, func(h *trigger.Handler) {
		h.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	})
	lost := 0
	l := c.lossyClient(t, nil, func(a trigger.Answer) bool {
		if a.Code == trigger.Started && lost == 0 {
			lost++
			return true
		}
		return false
	})
	a, err := c.clientOn(t, l, nil, trigger.OpRun, "hello", eventWait)
	require.NoError(t, err)
	require.Equal(t, trigger.Started, a.Code, a.Message)
	l.mu.Lock()
	require.Len(t, l.lostAns, 1, "the first Started answer was lost")
	assert.Equal(t, l.lostAns[0].RunID, a.RunID, "the resend is answered with the run the first send started")
	var runSends int
	for _, r := range l.sent {
		if r.Op == trigger.OpRun {
			runSends++
		}
	}
	l.mu.Unlock()
	assert.GreaterOrEqual(t, runSends, 2, "the run request was sent again")

	leader := c.leader()
	require.Eventually(t, func() bool { return manualRuns(leader, "hello") == 1 }, eventWait, 10*time.Millisecond)
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	// Every send the client made before it returned was handled before
	// its answer came: a second run would have been started, and logged,
	// by then.
	assert.Equal(t, 1, strings.Count(out, "manual run started"), "one run started")
	assert.Contains(t, out, "a repeated run request got its ticket's decision")
	for _, nd := range c.nodes {
		if nd != leader {
			assert.Zero(t, manualRuns(nd, "hello"), "%s ran nothing", nd.id)
		}
	}
}
