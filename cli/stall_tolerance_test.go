package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/config"
)

// election.stall_tolerance reaches the protocol: the leader's fence, which
// every heartbeat says, is interval + stall_tolerance; left out, it is
// interval/2.
func TestStallToleranceReachesTheProtocol(t *testing.T) {
	for _, tc := range []struct {
		yaml  string
		fence time.Duration
	}{
		{"election:\n  stall_tolerance: 150ms\n", 350 * time.Millisecond},
		{"election:\n  interval: 100ms\n", 150 * time.Millisecond},
	} {
		p := filepath.Join(t.TempDir(), "c.yaml")
		require.NoError(t, os.WriteFile(p, []byte(tc.yaml), 0o600))
		f, err := config.Load(p)
		require.NoError(t, err)
		s := defaultUDPSettings()
		s.merge(&Source{File: f, NodeID: "n1"})
		pc, err := s.protocolConfig("n1")
		require.NoError(t, err)
		assert.Equal(t, tc.fence, pc.Timings().Fence, "%q", tc.yaml)
	}
}
