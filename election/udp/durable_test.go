package udp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/wire"
	"github.com/lanleader/lanleader/internal/statefile"
)

// sendWatch calls onSend with every packet an Elector sends, broadcast or
// directed, before it leaves.
type sendWatch struct {
	udp.Transport
	onSend func(b []byte)
}

func (w sendWatch) Broadcast(b []byte) error { w.onSend(b); return w.Transport.Broadcast(b) }
func (w sendWatch) SendTo(b []byte, to netip.AddrPort) error {
	w.onSend(b)
	return w.Transport.SendTo(b, to)
}

// stateNode is an Elector of a 3-node quorum cluster with a state file in
// memory: it records what OnDurable saved, checks every packet it sends
// against it, and can fail its saves.
type stateNode struct {
	t      *testing.T
	i      int
	id     string
	addr   netip.AddrPort
	e      *udp.Elector
	cancel context.CancelFunc
	done   chan error
	logs   logBuffer

	// saveTo, if set, is where saves go besides disk.
	saveTo func(protocol.Durable) error

	mu   sync.Mutex
	fail bool
	// failReplay fails the saves that change the replay table alone.
	failReplay bool
	saves      int
	disk       protocol.Durable // the last save that succeeded
	started    time.Time
	firstAck   time.Time // first ACK sent since started
	sent       map[protocol.Type]int
	checked    int // VOTEs, ACKs and CLAIMs checked against disk
	violations []string
	drops      map[string]int // received "type/result" → count
	raw        [][]byte       // every packet sent, as on the wire
}

func newStateNode(t *testing.T, i int) *stateNode {
	return &stateNode{t: t, i: i, id: fmt.Sprintf("n%d", i), addr: netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i))}
}

// start runs the node from resume with a new incarnation.
func (s *stateNode) start(net *memnet.Network, resume protocol.Durable, inc uint16) {
	pc := protocol.DefaultLANConfig()
	pc.NodeID, pc.Cluster, pc.ClusterSize, pc.Resume = s.id, "test", 3, resume
	pc.Rand = rand.New(rand.NewPCG(uint64(s.i), uint64(inc)))
	pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), inc)
	s.mu.Lock()
	s.started, s.firstAck = time.Now(), time.Time{}
	s.sent, s.drops = make(map[protocol.Type]int), make(map[string]int)
	s.mu.Unlock()
	e, err := udp.New(udp.Config{
		Protocol:  pc,
		Transport: sendWatch{Transport: net.Join(s.addr), onSend: s.onSend},
		Clock:     udp.GoClock{},
		Logger:    slog.New(slog.NewTextHandler(&s.logs, nil)),
		OnDurable: s.save,
		OnPacket: func(typ, result string) {
			s.mu.Lock()
			s.drops[typ+"/"+result]++
			s.mu.Unlock()
		},
	})
	require.NoError(s.t, err)
	s.e = e
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan error, 1)
	go func() { s.done <- e.Run(ctx, election.Callbacks{}) }()
}

func (s *stateNode) stop() {
	s.cancel()
	require.NoError(s.t, <-s.done)
}

func (s *stateNode) save(d protocol.Durable) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saves++
	if s.fail {
		return errors.New("disk full")
	}
	if s.failReplay && d.Round == s.disk.Round && d.MaxTerm == s.disk.MaxTerm && d.Grant == s.disk.Grant {
		return errors.New("replay file: disk full")
	}
	if s.saveTo != nil {
		if err := s.saveTo(d); err != nil {
			return err
		}
	}
	s.disk = d
	return nil
}

// onSend checks that what a packet binds this node to is on disk before
// the packet leaves.
func (s *stateNode) onSend(b []byte) {
	m, err := wire.Decode(b, nil)
	require.NoError(s.t, err)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = append(s.raw, b)
	s.sent[m.Type]++
	switch m.Type {
	case protocol.Vote, protocol.Ack:
		s.checked++
		// The binding, and a promise at least the one it makes.
		if g := s.disk.Grant; g.Term != m.Term || g.To != m.Leader || g.Promise < m.Promise {
			s.violations = append(s.violations, fmt.Sprintf("%s sent %v binding (%x, %s) promising %v, disk holds %+v",
				s.id, m.Type, m.Term, m.Leader, m.Promise, g))
		}
		if m.Type == protocol.Ack && s.firstAck.IsZero() {
			s.firstAck = time.Now()
		}
	case protocol.Claim:
		s.checked++
		if s.disk.Round < protocol.TermRound(m.Term) {
			s.violations = append(s.violations, fmt.Sprintf("%s sent a claim of round %d, disk holds %d", s.id, protocol.TermRound(m.Term), s.disk.Round))
		}
	}
}

// lastSent returns the last packet of type typ sent, as on the wire.
func (s *stateNode) lastSent(typ protocol.Type) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.raw) - 1; i >= 0; i-- {
		if m, _ := wire.Decode(s.raw[i], nil); m.Type == typ {
			return s.raw[i]
		}
	}
	s.t.Fatalf("%s sent no %v", s.id, typ)
	return nil
}

func (s *stateNode) snapshot() (saves int, disk protocol.Durable, acks int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves, s.disk, s.sent[protocol.Ack]
}

// stateCluster starts three stateNodes and returns them with the leader's
// index once one leads.
func stateCluster(t *testing.T, net *memnet.Network) ([]*stateNode, int) {
	t.Helper()
	ns := make([]*stateNode, 3)
	for i := range ns {
		ns[i] = newStateNode(t, i+1)
		ns[i].start(net, protocol.Durable{}, 1)
	}
	advance(5 * time.Second)
	for i, n := range ns {
		if n.e.Status().Role == election.Leader {
			return ns, i
		}
	}
	t.Fatal("no leader")
	return nil, 0
}

// TestStateSavedBeforeSending: every CLAIM, VOTE and ACK leaves only once
// the round or the grant's binding it carries is saved; ACKs renewing the
// same binding (every heartbeat) cause no save, the replay table is saved
// at ReplaySaveInterval, and once more when Run returns.
func TestStateSavedBeforeSending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.WithSeed(1))
		ns, l := stateCluster(t, net)
		f := ns[(l+1)%3]
		saves0, _, acks0 := f.snapshot()
		advance(time.Minute)
		saves1, disk, acks1 := f.snapshot()
		assert.GreaterOrEqual(t, acks1-acks0, 250, "a follower acks every heartbeat")
		assert.InDelta(t, 6, saves1-saves0, 1, "one save per ReplaySaveInterval (10 s), none per ack")
		require.NotEmpty(t, disk.Peers)
		assert.Equal(t, ns[l].id, disk.Peers[0].ID, "the leader, heard last, first")

		// The last save before Run returns holds the newest table.
		f.stop()
		saves2, last, _ := f.snapshot()
		assert.Equal(t, saves1+1, saves2, "saved at shutdown")
		assert.Greater(t, last.Peers[0].Seq, disk.Peers[0].Seq)
		for _, n := range ns {
			if n != f {
				n.stop()
			}
			n.mu.Lock()
			assert.Empty(t, n.violations)
			assert.Positive(t, n.checked, "%s sent nothing to check", n.id)
			n.mu.Unlock()
		}
	})
}

// TestRestartedFollowerAcksAtOnce: a quorum follower restarted from its
// state acks its leader at once — the leader keeps a majority when the
// third node is down — and drops a packet the leader sent before the
// restart, replayed after it. Cold (no grant saved), it waits out the
// start-up promise: its longest.
func TestRestartedFollowerAcksAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		cold bool
	}{{"resumed", false}, {"cold", true}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				net := memnet.New(memnet.WithSeed(1))
				ns, l := stateCluster(t, net)
				leader, f := ns[l], ns[(l+1)%3]
				advance(time.Second)
				captured := leader.lastSent(protocol.Heartbeat)
				advance(time.Second)
				f.stop()
				_, disk, _ := f.snapshot()
				require.Equal(t, leader.id, disk.Grant.To)
				if tc.cold {
					disk = protocol.Durable{}
				}
				// Before anything of the leader's reaches the restarted
				// node (its answer to the start-up QUERY is lost): a
				// captured heartbeat.
				net.Block(leader.addr, f.addr)
				f.start(net, disk, 2)
				synctest.Wait()
				inj := net.Join(netip.MustParseAddrPort("198.18.0.99:7483"))
				require.NoError(t, inj.SendTo(captured, f.addr))
				synctest.Wait()
				net.Unblock(leader.addr, f.addr)
				tm := protocol.DefaultLANConfig().Timings()
				promise := tm.Promise
				advance(2 * tm.MaxPromise)

				for _, n := range ns {
					n.stop()
				}
				f.mu.Lock()
				firstAck, started, stale := f.firstAck, f.started, f.drops["heartbeat/stale_seq"]
				f.mu.Unlock()
				require.False(t, firstAck.IsZero(), "no ack at all")
				took := firstAck.Sub(started)
				if tc.cold {
					assert.GreaterOrEqual(t, took, tm.MaxPromise, "a cold node may have promised someone else, up to its longest promise")
					assert.Zero(t, stale, "cold, the replay is taken for fresh")
				} else {
					assert.Less(t, took, promise/2, "acks its leader without waiting out the start-up promise")
					assert.Equal(t, 1, stale, "the replayed heartbeat is dropped")
				}
			})
		})
	}
}

// TestFailedSaveHoldsBackVotesAndAcks: a node that cannot save its grant
// sends no VOTE or ACK (a restart would resume an older binding); the
// cluster still elects one leader (which may be that node: its claim
// needs the others' votes, not its own).
func TestFailedSaveHoldsBackVotesAndAcks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.WithSeed(1))
		ns := make([]*stateNode, 3)
		for i := range ns {
			ns[i] = newStateNode(t, i+1)
		}
		ns[0].fail = true
		for _, n := range ns {
			n.start(net, protocol.Durable{}, 1)
		}
		advance(10 * time.Second)
		leaders := 0
		for _, n := range ns {
			if n.e.Status().Role == election.Leader {
				leaders++
			}
		}
		assert.Equal(t, 1, leaders)
		for _, n := range ns {
			n.stop()
		}
		bad := ns[0]
		bad.mu.Lock()
		defer bad.mu.Unlock()
		assert.Positive(t, bad.saves)
		assert.Zero(t, bad.sent[protocol.Vote]+bad.sent[protocol.Ack], "votes or acks sent without their binding on disk")
		assert.Len(t, bad.logs.lines("level=ERROR", "held back"), 1, "logged once")
	})
}

// TestReplaySavesSkipTheStateFile: with a state file, an idle follower's
// periodic saves (the replay table alone) leave the state file as the
// election wrote it; restarted, the follower resumes the replay file's
// newer floor and drops a heartbeat its leader sent after the state
// file's last write.
func TestReplaySavesSkipTheStateFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.WithSeed(1))
		ns, l := stateCluster(t, net)
		leader, f := ns[l], ns[(l+1)%3]
		dir := t.TempDir()
		store, _, err := statefile.Open(dir, nil)
		require.NoError(t, err)
		defer store.Close()
		_, disk, _ := f.snapshot()
		require.NoError(t, store.SaveDurable(disk), "the election state as the follower holds it")
		statePath := filepath.Join(dir, statefile.FileName)
		written, err := os.ReadFile(statePath)
		require.NoError(t, err)

		f.stop()
		f.saveTo = store.SaveDurable
		f.start(net, disk, 2)
		advance(15 * time.Second)
		captured := leader.lastSent(protocol.Heartbeat)
		advance(10 * time.Second)
		f.stop()

		now, err := os.ReadFile(statePath)
		require.NoError(t, err)
		assert.Equal(t, written, now, "the state file was written for the replay table")
		_, st, err := statefile.Open(dir, nil)
		require.NoError(t, err)
		resume := st.Durable() // as the CLI resumes
		assert.Equal(t, disk.Grant, resume.Grant)
		// Before anything of the leader's reaches the restarted node: the
		// captured heartbeat, newer than the state file's floor.
		net.Block(leader.addr, f.addr)
		f.start(net, resume, 3)
		synctest.Wait()
		inj := net.Join(netip.MustParseAddrPort("198.18.0.99:7483"))
		require.NoError(t, inj.SendTo(captured, f.addr))
		synctest.Wait()
		for _, n := range ns {
			n.stop()
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		assert.Equal(t, 1, f.drops["heartbeat/stale_seq"], "the replayed heartbeat is dropped")
	})
}

// TestFailedReplaySaveHoldsNothingBack: saves of the replay table alone
// that fail are a WARN, once; votes and acks still go out.
func TestFailedReplaySaveHoldsNothingBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.WithSeed(1))
		ns, l := stateCluster(t, net)
		f := ns[(l+1)%3]
		f.mu.Lock()
		f.failReplay = true
		f.mu.Unlock()
		_, _, acks0 := f.snapshot()
		advance(time.Minute)
		saves, _, acks1 := f.snapshot()
		assert.Greater(t, acks1-acks0, 250, "acks held back")
		for _, n := range ns {
			n.stop()
		}
		assert.Positive(t, saves)
		assert.Len(t, f.logs.lines("level=WARN", "cannot save the replay table"), 1, "logged once")
		assert.Empty(t, f.logs.lines("level=ERROR"))
	})
}
