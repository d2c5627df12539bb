package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
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
	"github.com/lanleader/lanleader/election/udp/udpjobs"
	"github.com/lanleader/lanleader/election/udp/udptest"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/internal/proc"
	"github.com/lanleader/lanleader/jobs"
)

// quorumNode is one node of a 3-node quorum cluster wired as runDaemon
// wires it: the Runner's guard is the elector's CanActAsLeader, the
// endpoint's MayAct is the Runner's.
type quorumNode struct {
	el     *udp.Elector
	runner *jobs.Runner
	clock  *udptest.JumpClock
	h      http.Handler
}

// standing reads what /leader and /status say, in one place.
func (n *quorumNode) standing(t *testing.T) (code int, leader httpapi.LeaderDoc, status httpapi.StatusDoc) {
	t.Helper()
	get := func(path string, v any) int {
		rec := httptest.NewRecorder()
		n.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), v), rec.Body.String())
		return rec.Code
	}
	code = get("/leader", &leader)
	get("/status", &status)
	return code, leader, status
}

// TestLeaderEndpointOfAQuorumLeaderThatMayNotAct: a real udp leader whose
// lease ran out, or that was paused, still has the leader role until its
// next tick, but may not act: /leader answers 503 and /status says leader
// with may_act false, as the runner refuses the instant due then. Before
// that, the leader answers 200 and the followers 503.
func TestLeaderEndpointOfAQuorumLeaderThatMayNotAct(t *testing.T) {
	for _, tc := range []struct {
		name string
		jump time.Duration
	}{
		// Past the 1.6 s lease, short of the 1.8 s pause threshold.
		{"lease ran out", 1700 * time.Millisecond},
		// Past the pause threshold (and the lease).
		{"paused", 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				mem := memnet.New(memnet.WithSeed(3))
				var nodes []*quorumNode
				var wg sync.WaitGroup
				for i := range 3 {
					n := &quorumNode{clock: &udptest.JumpClock{}}
					pc := protocol.DefaultLANConfig()
					pc.NodeID, pc.Cluster = fmt.Sprintf("n%d", i+1), "mayact"
					pc.ClusterSize = 3
					pc.Misses = 10 // lease 4/5 × 10 × 200 ms; a pause 9 × 200 ms
					pc.PauseThreshold = 1800 * time.Millisecond
					pc.Rand = rand.New(rand.NewPCG(3, uint64(i)))
					pc.Incarnation = protocol.NewIncarnation(time.Now().UnixMilli(), uint16(i+1))
					el, err := udp.New(udp.Config{Protocol: pc, Clock: n.clock, Logger: slog.New(slog.DiscardHandler),
						Transport: mem.Join(netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i+1)))})
					require.NoError(t, err)
					n.el = el
					n.runner, err = jobs.NewRunner(udpjobs.Cluster(el), jobs.RunnerConfig{Node: pc.NodeID,
						Jobs: []jobs.Spec{{Name: "tick", Schedule: "@every 1s", Command: []string{"/bin/true"}}}})
					require.NoError(t, err)
					jobs.SetExecForTest(n.runner, func(context.Context, proc.Spec) proc.Result { return proc.Result{} })
					n.h = httpapi.New(httpapi.Config{Elector: el, MayAct: n.runner.MayAct}).Handler()
					wg.Go(func() { _ = el.Run(ctx, n.runner.Callbacks()) })
					nodes = append(nodes, n)
				}
				time.Sleep(3 * time.Second)
				synctest.Wait()
				var lead *quorumNode
				for _, n := range nodes {
					code, l, st := n.standing(t)
					assert.Equal(t, l.MayAct, *st.MayAct, "%s: /leader and /status agree", st.Node)
					assert.Equal(t, n.runner.MayAct(), *st.MayAct, "%s: the runner and /status agree", st.Node)
					if st.Role == election.Leader {
						require.Nil(t, lead, "one leader")
						lead = n
						assert.Equal(t, http.StatusOK, code)
						assert.True(t, *st.MayAct)
					} else {
						assert.Equal(t, http.StatusServiceUnavailable, code)
						assert.False(t, *st.MayAct)
					}
				}
				require.NotNil(t, lead, "a leader was elected")

				lead.clock.Jump(tc.jump) // no tick has seen it yet
				code, l, st := lead.standing(t)
				assert.Equal(t, election.Leader, st.Role, "still leader until its next tick")
				assert.False(t, *st.MayAct, "may not act")
				assert.Equal(t, http.StatusServiceUnavailable, code)
				assert.False(t, l.MayAct)
				assert.Contains(t, l.Reason, "may not act now")
				assert.False(t, lead.runner.MayAct(), "the runner would not start a run either")
				cancel()
				wg.Wait()
				for _, n := range nodes {
					require.NoError(t, n.runner.Wait(context.Background()))
				}
			})
		})
	}
}
