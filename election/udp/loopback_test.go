package udp_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
	"github.com/lanleader/lanleader/internal/proctest"
)

// These tests run the real stack (Elector, wire codec, UDPTransport) on
// real sockets on 127.0.0.1 in unicast mode; nothing is broadcast. The
// in-memory tests in elector_test.go cover timing; these cover the sockets,
// the codec and the Elector wired together.

func TestLoopbackElectsOneLeader(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n, "nodes"), func(t *testing.T) {
			defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
			c := newLoopback(t, loopOptions{n: n})
			defer c.stopAll()

			leader := c.waitAgreement()
			want := leader.elector.Status().Leader
			assert.Equal(t, leader.id, want.ID, "the leader names itself")
			assert.Equal(t, leader.tr.LocalAddr().String(), want.Addr, "the leader reports its own address")
			for _, nd := range c.nodes {
				st := nd.elector.Status()
				assert.Equal(t, want, st.Leader, "%s names the leader, its term and the address it heard it from", nd.id)
				if nd != leader {
					assert.Equal(t, election.Follower, st.Role, "%s follows", nd.id)
					// Two claims sent within a claim window (5 ms here) of
					// each other cross when a loaded machine delivers them
					// later than that, and both claimants lead until they
					// hear each other: at a start over real sockets a
					// follower may have led, and must have been told it
					// stopped. That none led when packets arrive in time
					// is TestElectorsAgreeOnOneLeader's (fake time).
					assert.Equal(t, balanced(len(nd.eventList())), nd.eventList(), "%s was told of every leadership's end", nd.id)
					assert.Positive(t, nd.count("heartbeat/ok"), "%s heard heartbeats over UDP", nd.id)
				}
			}
			events := leader.eventList()
			require.NotEmpty(t, events)
			assert.Equal(t, "start", events[len(events)-1], "the leader was told it leads")
			assert.Eventually(t, leader.elector.CanActAsLeader, patience, pollTick, "the leader may run jobs")
		})
	}
}

// balanced returns the callback events of leaderships that all ended: n
// events, start and stop in turn (n rounded down to even).
func balanced(n int) []string {
	var out []string
	for range n / 2 {
		out = append(out, "start", "stop")
	}
	return out
}

func TestLoopbackFailsOverWhenLeaderCrashes(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n, "nodes"), func(t *testing.T) {
			defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
			c := newLoopback(t, loopOptions{n: n})
			defer c.stopAll()
			old, oldTerm := c.waitAgreedTerm()

			c.crash(old)
			next, nextTerm := c.waitAgreedTerm()
			require.NotSame(t, old, next)
			assert.Greater(t, nextTerm, oldTerm, "the new leader's term is above the crashed one's")
			events := old.eventList()
			require.NotEmpty(t, events)
			assert.Equal(t, "stop", events[len(events)-1], "the crashed leader's OnStoppedLeading ran")
			assert.Error(t, old.leadership().Err(), "the crashed leader's leadership context is cancelled")
			for _, nd := range c.running() {
				assert.Zero(t, nd.count("resign/ok"), "%s took over by suspicion, not by a RESIGN", nd.id)
			}
		})
	}
}

func TestLoopbackResignHandsOver(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n, "nodes"), func(t *testing.T) { testResignHandsOver(t, n) })
	}
}

func testResignHandsOver(t *testing.T, n int) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	// Time is held still from the agreement to the RESIGN, so that a
	// stall of a loaded machine cannot depose the leader before it
	// resigns (it would send no RESIGN).
	clk := &stillClock{}
	c := newLoopback(t, loopOptions{n: n, clock: clk})
	defer c.stopAll()
	old := c.holdAgreement(clk, nil)
	oldTerm := old.elector.Status().Leader.Term
	leadCtx := old.leadership()
	require.NotNil(t, leadCtx)
	require.NoError(t, leadCtx.Err(), "leading, so its context is live")

	c.stop(old)
	clk.release()
	assert.ErrorIs(t, leadCtx.Err(), context.Canceled, "leadership context cancelled on resign")
	events := old.eventList()
	require.NotEmpty(t, events)
	assert.Equal(t, "stop", events[len(events)-1], "OnStoppedLeading ran before Run returned")
	assert.Equal(t, election.Follower, old.elector.Status().Role)
	assert.Equal(t, uint64(1), old.elector.Stats().Sent[protocol.Resign], "one RESIGN sent")

	next, nextTerm := c.waitAgreedTerm()
	require.NotSame(t, old, next)
	assert.Greater(t, nextTerm, oldTerm, "the successor leads a higher term")
	for _, nd := range c.running() {
		assert.Equal(t, 1, nd.count("resign/ok"), "%s received and accepted the RESIGN over UDP", nd.id)
	}
}

// TestLoopbackDropsAndCountsBadPackets injects packets from a raw socket
// that every node lists as a peer (so the transport's source filter lets
// them through and the codec and the protocol core must do the work).
// Each forged packet is one that would depose the leader if accepted: a
// heartbeat from "evil" with a huge term; the last case proves it.
func TestLoopbackDropsAndCountsBadPackets(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	key := []byte("0123456789abcdef0123456789abcdef")
	kr, err := wire.NewKeyring(key)
	require.NoError(t, err)
	otherKr, err := wire.NewKeyring([]byte("fedcba9876543210fedcba9876543210"))
	require.NoError(t, err)

	raw, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer raw.Close()
	rawAddr := raw.LocalAddr().(*net.UDPAddr).AddrPort()

	// Each case checks that a packet changed no node's state: time is
	// held still while they run, so that a stall of a loaded machine
	// cannot make a genuine failover in the middle of one.
	clk := &stillClock{}
	c := newLoopback(t, loopOptions{n: 3, keyring: kr, extraPeers: []netip.AddrPort{rawAddr}, clock: clk})
	defer c.stopAll()
	var captured []byte
	leader := c.holdAgreement(clk, func(leader *loopNode) {
		captured = captureHeartbeat(t, raw, kr, leader.id)
		// "Later": every follower has since accepted newer heartbeats, so
		// the captured one is old news whatever order the leader sent in.
		for _, nd := range c.nodes {
			if nd != leader {
				base := nd.elector.Stats().Received[protocol.Heartbeat]
				require.Eventually(t, func() bool {
					return nd.elector.Stats().Received[protocol.Heartbeat] >= base+2
				}, patience, pollTick)
			}
		}
	})
	defer clk.release()

	forgedTerm := protocol.MakeTerm(1<<20, 255, protocol.NodeTag("evil"))
	forged := protocol.Message{Type: protocol.Heartbeat, Cluster: loopCluster, From: "evil", Leader: "evil",
		Incarnation: 1, Seq: 1, Beat: 1, Term: forgedTerm, Priority: 255}
	encode := func(m protocol.Message, k *wire.Keyring) []byte {
		b, err := wire.Encode(m, k)
		require.NoError(t, err)
		return b
	}
	otherCluster := forged
	otherCluster.Cluster = "other"

	tests := []struct {
		name   string
		packet []byte
		// result is the OnPacket key each node must count once: for the
		// leader and for the followers.
		leaderResult, followerResult string
		// dropped is the protocol Stats.Dropped reason counted, if the
		// packet got as far as the protocol core.
		leaderDropped, followerDropped protocol.DropReason
	}{
		{name: "wrong key", packet: encode(forged, otherKr),
			leaderResult: "unknown/bad_mac", followerResult: "unknown/bad_mac"},
		{name: "no key", packet: encode(forged, nil),
			leaderResult: "unknown/unsigned", followerResult: "unknown/unsigned"},
		{name: "other cluster", packet: encode(otherCluster, kr),
			leaderResult: "heartbeat/other_cluster", followerResult: "heartbeat/other_cluster",
			leaderDropped: protocol.DropOtherCluster, followerDropped: protocol.DropOtherCluster},
		{name: "replayed heartbeat", packet: captured,
			// The leader hears its own words: dropped as its own echo.
			leaderResult: "heartbeat/self", followerResult: "heartbeat/stale_seq",
			leaderDropped: protocol.DropSelf, followerDropped: protocol.DropStaleSeq},
		{name: "garbage", packet: []byte("GET / HTTP/1.0\r\n\r\n"),
			leaderResult: "unknown/bad_magic", followerResult: "unknown/bad_magic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type before struct {
				snap    snapshot
				count   int
				dropped uint64
			}
			want := func(nd *loopNode) (string, protocol.DropReason) {
				if nd == leader {
					return tt.leaderResult, tt.leaderDropped
				}
				return tt.followerResult, tt.followerDropped
			}
			was := make(map[*loopNode]before)
			for _, nd := range c.nodes {
				key, reason := want(nd)
				was[nd] = before{nd.snapshot(), nd.count(key), nd.elector.Stats().Dropped[reason]}
			}

			for _, nd := range c.nodes {
				_, err := raw.WriteToUDPAddrPort(tt.packet, nd.tr.LocalAddr())
				require.NoError(t, err)
			}
			for _, nd := range c.nodes {
				key, reason := want(nd)
				require.Eventually(t, func() bool { return nd.count(key) > was[nd].count },
					patience, pollTick, "%s never counted %s", nd.id, key)
				assert.Equal(t, was[nd].count+1, nd.count(key), "%s counted the packet once as %s", nd.id, key)
				if reason != "" {
					assert.Equal(t, was[nd].dropped+1, nd.elector.Stats().Dropped[reason],
						"%s: protocol Stats.Dropped[%s]", nd.id, reason)
				}
				assert.Equal(t, was[nd].snap, nd.snapshot(), "%s: no state changed", nd.id)
				assert.Less(t, nd.elector.Status().Term, forgedTerm, "%s never saw the forged term", nd.id)
			}
		})
	}

	// Control: the same forged heartbeat, signed with the cluster's key,
	// is accepted and raises every node's term, so the drops above were
	// the codec's and the core's doing, not a packet that could not matter.
	// Its Seq is 1 again: none of the packets above reached the replay table.
	t.Run("control: correctly signed", func(t *testing.T) {
		b := encode(forged, kr)
		for _, nd := range c.nodes {
			_, err := raw.WriteToUDPAddrPort(b, nd.tr.LocalAddr())
			require.NoError(t, err)
		}
		for _, nd := range c.nodes {
			require.Eventually(t, func() bool { return nd.elector.Status().Term >= forgedTerm },
				patience, pollTick, "%s accepted the signed heartbeat", nd.id)
		}
	})
}

// captureHeartbeat reads raw, a socket the cluster lists as a peer, until
// leader's heartbeat arrives, and returns its bytes as sent.
func captureHeartbeat(t *testing.T, raw *net.UDPConn, kr *wire.Keyring, leader string) []byte {
	t.Helper()
	require.NoError(t, raw.SetReadDeadline(time.Now().Add(patience)))
	defer raw.SetReadDeadline(time.Time{})
	buf := make([]byte, 65535)
	for {
		n, err := raw.Read(buf)
		require.NoError(t, err, "no heartbeat from %s captured", leader)
		m, err := wire.Decode(buf[:n], kr)
		if err == nil && m.Type == protocol.Heartbeat && m.From == leader {
			return append([]byte(nil), buf[:n]...)
		}
	}
}

// TestLoopbackLeavesNoGoroutines checks both ways Run can end (cancelled,
// or its transport closed under it) leave no goroutine behind: not the run
// loop, not the transport's readers, not a leadership context's.
func TestLoopbackLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	c := newLoopback(t, loopOptions{n: 3})
	leader := c.waitAgreement()
	c.crash(leader)
	c.waitAgreement()
	for _, nd := range c.running() {
		c.stop(nd)
	}
	for _, nd := range c.nodes {
		// Packets is closed once the transport is: drain what was still
		// queued, boundedly.
		drained := make(chan struct{})
		go func() {
			for range nd.tr.Packets() {
			}
			close(drained)
		}()
		select {
		case <-drained:
		case <-time.After(patience):
			assert.Fail(t, "transport left open", "%s: the Elector did not close its transport when Run returned", nd.id)
		}
	}
}

// TestLoopbackProbeSeesDeadLeaderProcess: with a detection floor of 25
// intervals, followers still take over after a crash because their probe of
// the leader's closed port is answered "unreachable". The stat, not the
// timing, is asserted: the machine may be loaded.
func TestLoopbackProbeSeesDeadLeaderProcess(t *testing.T) {
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	c := newLoopback(t, loopOptions{n: 3, edit: func(pc *protocol.Config) {
		pc.Misses, pc.MaxMisses = 25, 25
	}})
	defer c.stopAll()
	old := c.waitAgreement()
	c.crash(old)
	c.waitAgreement()
	var unreachable uint64
	for _, nd := range c.running() {
		unreachable += nd.elector.Stats().LeaderUnreachable
	}
	assert.Positive(t, unreachable, "no follower learnt of the dead process from its probe")
}

// TestLoopbackWithGoClock: real sockets with a clock of the caller's
// (Config.Clock) run the loop on Run's goroutine, packets queued and a Go
// timer selected on: nothing may re-arm that timer from a socket reader's
// goroutine (the race detector says so if it does). Crash and rejoin give
// the timer and the packets plenty of interleavings.
func TestLoopbackWithGoClock(t *testing.T) {
	c := newLoopback(t, loopOptions{n: 3, clock: udp.GoClock{}})
	leader := c.waitAgreement()
	c.crash(leader)
	c.waitAgreement()
	c.stopAll()
}
