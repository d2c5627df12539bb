package httpapi_test

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/env"
	"github.com/lanleader/lanleader/election/static"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/metrics"
)

// The endpoint wired the way the CLI wires it, with the real static and env
// electors: readiness, status and metrics follow Run from start to stop.
func TestWiredWithRealElectors(t *testing.T) {
	noAddrs := func() ([]netip.Addr, error) { return nil, nil }
	tests := []struct {
		name   string
		build  func(t *testing.T) election.Elector
		leads  bool
		leader string
	}{
		{
			name: "static leader",
			build: func(t *testing.T) election.Elector {
				e, err := static.New(static.Config{Leader: "nas", NodeID: "nas", InterfaceAddrs: noAddrs})
				require.NoError(t, err)
				return e
			},
			leads: true, leader: "nas",
		},
		{
			name: "static follower",
			build: func(t *testing.T) election.Elector {
				e, err := static.New(static.Config{Leader: "pi", NodeID: "nas", InterfaceAddrs: noAddrs})
				require.NoError(t, err)
				return e
			},
			leads: false, leader: "pi",
		},
		{
			name: "env follower knows no leader but is ready",
			build: func(t *testing.T) election.Elector {
				e, err := env.New(env.Config{NodeID: "nas", LookupEnv: func(string) (string, bool) { return "", false }})
				require.NoError(t, err)
				return e
			},
			leads: false, leader: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				el := tt.build(t)
				m := metrics.New("test")
				h := httpapi.New(httpapi.Config{Elector: el, Metrics: m}).Handler()

				code, _ := get(t, h, "/readyz")
				assert.Equal(t, http.StatusServiceUnavailable, code, "ready before Run")

				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- el.Run(ctx, election.Combine(m.Callbacks())) }()
				synctest.Wait()

				code, _ = get(t, h, "/readyz")
				assert.Equal(t, http.StatusOK, code)
				doc := statusDoc(t, h)
				assert.Equal(t, tt.leads, doc.Role == election.Leader)
				assert.Equal(t, tt.leader, doc.Leader.ID)
				_, body := get(t, h, "/metrics")
				if tt.leads {
					assert.Contains(t, body, "lanleader_is_leader 1\n")
				} else {
					assert.Contains(t, body, "lanleader_is_leader 0\n")
				}

				cancel()
				require.NoError(t, <-done)
				_, body = get(t, h, "/metrics")
				assert.Contains(t, body, "lanleader_is_leader 0\n", "still leader after Run returned")
				assert.Equal(t, election.Follower, statusDoc(t, h).Role)
			})
		})
	}
}
