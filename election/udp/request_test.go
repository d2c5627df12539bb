package udp_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
)

// sentRequest is a TRIGGER a fake leader received: when (on the bubble's
// clock, from the first send) and with which envelope.
type sentRequest struct {
	at   time.Duration
	from string
	inc  uint64
	seq  uint64
	nonc uint64
}

// fakeLeader reads TRIGGERs on tr and answers the ones answer picks (by
// their position, 1 for the first), until tr closes. Before each real
// answer it sends two it must ignore: another cluster's, and one that
// echoes a nonce the client never sent.
func fakeLeader(tr *memnet.Transport, start time.Time, answer func(n int) bool, got *[]sentRequest, done chan<- struct{}) {
	defer close(done)
	for p := range tr.Packets() {
		m, err := wire.Decode(p.Data, nil)
		if err != nil || m.Type != protocol.Trigger {
			continue
		}
		*got = append(*got, sentRequest{time.Since(start), m.From, m.Incarnation, m.Seq, m.Nonce})
		if !answer(len(*got)) {
			continue
		}
		reply := func(cluster string, nonce uint64, payload string) {
			b, err := wire.Encode(protocol.Message{Type: protocol.TriggerAnswer, Cluster: cluster, From: "n1", Term: 5,
				Nonce: nonce, Payload: []byte(payload)}, nil)
			if err == nil {
				_ = tr.SendTo(b, p.From)
			}
		}
		reply("other", m.Nonce, "other cluster")
		reply("c", m.Nonce^2, "unknown nonce")
		reply("c", m.Nonce, "ok")
	}
}

// Request sends the request again, as a fresh request (same sender and
// incarnation, next sequence number, new nonce), on its Resend backoff
// while no answer came, and takes the first answer to any of its sends
// from its own cluster. The zero Resend sends once.
func TestRequestResendsWhileNoAnswerCame(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		resend   udp.Resend
		delay    time.Duration // each way
		answer   func(n int) bool
		wantAt   []time.Duration // when the leader received each send
		wantSend int             // which send the answer answers; 0: none
	}{
		{name: "first two lost", resend: udp.DefaultResend, answer: func(n int) bool { return n == 3 },
			wantAt: []time.Duration{0, 200 * ms, 600 * ms}, wantSend: 3},
		{name: "answered at once", resend: udp.DefaultResend, answer: func(int) bool { return true },
			wantAt: []time.Duration{0}, wantSend: 1},
		{name: "a late answer to the first send", resend: udp.DefaultResend, delay: 150 * ms, answer: func(n int) bool { return n == 1 },
			wantAt: []time.Duration{150 * ms, 350 * ms}, wantSend: 1},
		{name: "no answer: backoff doubles up to Max", resend: udp.DefaultResend, answer: func(int) bool { return false },
			wantAt: []time.Duration{0, 200 * ms, 600 * ms, 1400 * ms, 3000 * ms, 4600 * ms}},
		{name: "zero Resend sends once", answer: func(int) bool { return false }, wantAt: []time.Duration{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := memnet.New(memnet.WithSeed(1))
				n.SetDelay(tc.delay)
				leader := n.Join(netip.MustParseAddrPort("198.18.0.1:7483"))
				client := n.Join(netip.MustParseAddrPort("198.18.0.200:40000"))
				var got []sentRequest
				done := make(chan struct{})
				start := time.Now()
				go fakeLeader(leader, start, tc.answer, &got, done)

				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				ra, err := udp.Request(ctx, client, "c", nil, []byte("req"), tc.resend)
				cancel()
				time.Sleep(time.Second) // on the bubble's clock: sends in flight land
				require.NoError(t, client.Close())
				require.NoError(t, leader.Close())
				<-done

				if tc.wantSend == 0 {
					assert.ErrorIs(t, err, context.DeadlineExceeded)
				} else {
					require.NoError(t, err)
					assert.Equal(t, "ok", string(ra.Payload))
					assert.Equal(t, "n1", ra.Leader)
					assert.Equal(t, uint64(5), ra.Term)
					assert.Equal(t, tc.wantSend, ra.Send, "which send the answer answers")
				}
				var at []time.Duration
				nonces := map[uint64]bool{}
				for i, r := range got {
					at = append(at, r.at)
					assert.Equal(t, got[0].from, r.from, "one sender")
					assert.Equal(t, got[0].inc, r.inc, "one incarnation")
					assert.Equal(t, uint64(i+1), r.seq, "sequence numbers count the sends")
					assert.False(t, nonces[r.nonc], "send %d has a nonce of its own", i+1)
					nonces[r.nonc] = true
				}
				assert.Equal(t, tc.wantAt, at, "when each send reached the leader")
			})
		})
	}
}

// brokenLink is a transport whose broadcasts fail after the first (a link
// that went down).
type brokenLink struct {
	*memnet.Transport
	sent int
}

func (b *brokenLink) Broadcast(p []byte) error {
	if b.sent++; b.sent > 1 {
		return errors.New("network is unreachable")
	}
	return b.Transport.Broadcast(p)
}

// A resend that fails is one more lost frame, not the end of the request:
// the answer to the first send is still awaited, and when none comes the
// error says the time ran out and why the resends did not go out.
func TestRequestSurvivesAFailedResend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New(memnet.WithSeed(1))
		n.SetDelay(time.Second) // the answer comes after three failed resends
		leader := n.Join(netip.MustParseAddrPort("198.18.0.1:7483"))
		client := &brokenLink{Transport: n.Join(netip.MustParseAddrPort("198.18.0.200:40000"))}
		var got []sentRequest
		done := make(chan struct{})
		go fakeLeader(leader, time.Now(), func(int) bool { return true }, &got, done)

		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		ra, err := udp.Request(ctx, client, "c", nil, []byte("req"), udp.DefaultResend)
		cancel()
		require.NoError(t, err)
		assert.Equal(t, 1, ra.Send)
		assert.Equal(t, 4, client.sent, "three resends were tried before the answer came")

		require.NoError(t, leader.Close()) // no answer comes now
		<-done
		client.sent = 0
		ctx, cancel = context.WithTimeout(t.Context(), time.Second)
		_, err = udp.Request(ctx, client, "c", nil, []byte("req"), udp.DefaultResend)
		cancel()
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "network is unreachable")
		require.NoError(t, client.Close())
	})
}
