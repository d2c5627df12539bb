package udp_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// lockedBuffer is a log sink several Electors write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runQuorumNodes runs n Electors with ClusterSize size for d of fake time
// and returns their logs and how many leaderships started. edit, if set,
// adjusts node i's config (i from 1).
func runQuorumNodes(t *testing.T, n, size int, d time.Duration, edit ...func(i int, pc *protocol.Config)) (string, int64) {
	var led atomic.Int64
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	net := memnet.New(memnet.WithSeed(1))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		pc := protocol.DefaultLANConfig()
		pc.NodeID, pc.Cluster, pc.ClusterSize = fmt.Sprintf("n%d", i), "test", size
		pc.Rand = rand.New(rand.NewPCG(uint64(i), 7))
		pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(i))
		for _, f := range edit {
			f(i, &pc)
		}
		e, err := udp.New(udp.Config{Protocol: pc, Logger: logger.With("node", pc.NodeID), Clock: udp.GoClock{},
			Transport: net.Join(netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i)))})
		require.NoError(t, err)
		wg.Go(func() {
			cb := election.Callbacks{OnStartedLeading: func(context.Context, uint64) { led.Add(1) }}
			assert.NoError(t, e.Run(ctx, cb))
		})
	}
	advance(d)
	cancel()
	wg.Wait()
	return logs.String(), led.Load()
}

// TestQuorumLossIsLoggedWithCounts: a node alone in a cluster of 3 says
// why there is no leader, with counts.
func TestQuorumLossIsLoggedWithCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs, led := runQuorumNodes(t, 1, 3, 5*time.Second)
		assert.Zero(t, led)
		assert.Contains(t, logs, `level=WARN msg="no majority: 1 of 3 reachable, 2 needed`)
		assert.Contains(t, logs, "reachable=1 cluster_size=3 majority=2")
	})
}

// TestClusterSizeTooSmallIsAnError: 3 nodes with cluster_size 2 log an
// ERROR naming the count, the size and the ids, and none leads.
func TestClusterSizeTooSmallIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs, led := runQuorumNodes(t, 3, 2, 5*time.Second)
		assert.Contains(t, logs, `level=ERROR msg="cluster_size too small: heard 3 distinct node ids, cluster_size is 2`)
		assert.Contains(t, logs, "ids=\"[n1 n2 n3]\"")
		assert.Zero(t, led, "a node led although cluster_size is too small")
	})
}

// TestDifferingTimingIsWarnedOncePerChange: a node of three runs at half
// the others' interval (a rolling change half done). The node its grants
// reach says so at WARN, naming it and its promise — once, not per packet.
// The fast node does not name the others: their promise is one loss could
// have made its own adaptive promise grow to.
func TestDifferingTimingIsWarnedOncePerChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs, led := runQuorumNodes(t, 3, 3, 10*time.Second, func(i int, pc *protocol.Config) {
			if i == 3 {
				pc.Interval = 100 * time.Millisecond
			}
		})
		require.Positive(t, led)
		seen := map[string]bool{}
		for line := range strings.Lines(logs) {
			if !strings.Contains(line, `msg="timing differs`) {
				continue
			}
			assert.Contains(t, line, "level=WARN")
			// n3 (300 ms to 1 s) could promise 600 ms itself, on a lossy
			// link: it names nobody; the others name it.
			assert.NotContains(t, line, "node=n3")
			assert.Contains(t, line, "timing differs: n3 promises 300ms; this node's interval and misses promise 600ms to 2s")
			what := line[strings.Index(line, "level="):]
			assert.False(t, seen[what], "said again without a change: %s", what)
			seen[what] = true
		}
		assert.NotEmpty(t, seen, "nobody said the timing differs")
		assert.LessOrEqual(t, len(seen), 3, "at most once per change")
	})
}

// TestWitnessWithoutQuorumIsWarned: two nodes without quorum and a
// witness (an operator who added the witness but set no cluster_size on
// the servers): the servers say the witness does nothing there, once.
func TestWitnessWithoutQuorumIsWarned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs, _ := runQuorumNodes(t, 3, 3, 5*time.Second, func(i int, pc *protocol.Config) {
			if i == 3 {
				pc.Witness = true
			} else {
				pc.ClusterSize = 0
			}
		})
		for _, n := range []string{"n1", "n2"} {
			var said int
			for line := range strings.Lines(logs) {
				if strings.Contains(line, "node="+n) && strings.Contains(line, `msg="witness n3 is heard, but this node runs without quorum`) {
					said++
					assert.Contains(t, line, "level=WARN")
				}
			}
			assert.Equal(t, 1, said, "%s says it once", n)
		}
	})
}
