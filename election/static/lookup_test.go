package static

import (
	"net/netip"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The default lookups work on any machine: it has a hostname that names
// itself, and a loopback interface.
func TestDefaultLookups(t *testing.T) {
	addrs, err := interfaceAddrs()
	require.NoError(t, err)
	assert.Contains(t, addrs, netip.MustParseAddr("127.0.0.1"))

	host, err := os.Hostname()
	require.NoError(t, err)
	e, err := New(Config{Leader: host})
	require.NoError(t, err)
	assert.True(t, e.Leads(), e.Reason())
	assert.Equal(t, normalizeName(host), e.Status().Node)
}
