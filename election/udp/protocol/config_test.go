package protocol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultLANConfigValidOnceIdentified(t *testing.T) {
	c := DefaultLANConfig()
	require.Error(t, c.Validate(), "NodeID, Incarnation and Rand are the caller's")
	require.NoError(t, testConfig("a", 1, 1).Validate())
}

func TestValidateNamesField(t *testing.T) {
	tests := []struct {
		field string
		mut   func(*Config)
	}{
		{"NodeID", func(c *Config) { c.NodeID = "" }},
		{"Cluster", func(c *Config) { c.Cluster = "" }},
		{"Interval", func(c *Config) { c.Interval = 0 }},
		{"Misses", func(c *Config) { c.Misses = 1 }},
		{"MaxMisses", func(c *Config) { c.MaxMisses = 2 }},
		{"LossTarget", func(c *Config) { c.LossTarget = 0 }},
		{"ClaimWindow", func(c *Config) { c.ClaimWindow = -time.Millisecond }},
		{"ClaimWindow", func(c *Config) { c.ClaimWindow = 150 * time.Millisecond }},
		{"BackoffMax", func(c *Config) { c.BackoffMax = time.Second }},
		{"PauseThreshold", func(c *Config) { c.PauseThreshold = time.Second }},
		{"Incarnation", func(c *Config) { c.Incarnation = 0 }},
		{"ForgetPeerAfter", func(c *Config) { c.ForgetPeerAfter = time.Millisecond }},
		{"Rand", func(c *Config) { c.Rand = nil }},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			c := testConfig("a", 1, 1)
			tc.mut(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
			_, err = NewNode(c, t0)
			assert.Error(t, err)
		})
	}
}

func TestTermOrderMatchesClaimOrder(t *testing.T) {
	a := MakeTerm(5, 100, 0xffff)
	b := MakeTerm(5, 101, 0)
	c := MakeTerm(6, 0, 0)
	assert.Less(t, a, b, "priority beats tag within a round")
	assert.Less(t, b, c, "round beats priority")
	assert.Equal(t, uint64(5), TermRound(a))
	assert.Equal(t, uint8(101), TermPriority(b))
	assert.Equal(t, uint16(0xffff), TermTag(a))
}

func TestNewIncarnationOrdered(t *testing.T) {
	assert.Less(t, NewIncarnation(1000, 0xffff), NewIncarnation(1001, 0))
	assert.NotZero(t, NewIncarnation(0, 0))
}
