package udp

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModeResolve(t *testing.T) {
	tests := []struct {
		mode  Mode
		peers int
		want  Mode
		err   string
	}{
		{ModeAuto, 0, ModeBroadcast, ""},
		{ModeAuto, 2, ModeUnicast, ""},
		{ModeBroadcast, 0, ModeBroadcast, ""},
		{ModeMulticast, 0, ModeMulticast, ""},
		{ModeUnicast, 3, ModeUnicast, ""},
		{ModeUnicast, 0, "", "needs peers"},
		{ModeBroadcast, 1, "", "peers are listed but transport is broadcast"},
		{ModeMulticast, 1, "", "peers are listed but transport is multicast"},
	}
	for _, tt := range tests {
		got, err := tt.mode.Resolve(tt.peers)
		if tt.err != "" {
			require.Error(t, err, "%q with %d peers", tt.mode, tt.peers)
			assert.Contains(t, err.Error(), tt.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"", "broadcast", "multicast", "unicast"} {
		m, err := ParseMode(s)
		require.NoError(t, err)
		assert.Equal(t, Mode(s), m)
	}
	_, err := ParseMode("anycast")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `transport "anycast": want broadcast, multicast or unicast`)
}

func TestDefaultGroup(t *testing.T) {
	a4, b4 := DefaultGroup("office", false), DefaultGroup("lab", false)
	assert.True(t, netip.MustParsePrefix("239.255.0.0/16").Contains(a4), "organization-local scope: %s", a4)
	assert.NotEqual(t, a4, b4, "clusters get their own group")
	assert.Equal(t, a4, DefaultGroup("office", false), "the same on every node")
	a6 := DefaultGroup("office", true)
	assert.True(t, a6.IsLinkLocalMulticast(), "%s", a6)
	assert.True(t, netip.MustParsePrefix("ff02::4c4c:0:0/96").Contains(a6), "%s", a6)
	assert.NotEqual(t, a6, DefaultGroup("lab", true))
}

func TestResolveGroup(t *testing.T) {
	v4, v6 := netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("fd00::1")
	g, err := ResolveGroup("", "office", v6)
	require.NoError(t, err)
	assert.Equal(t, DefaultGroup("office", true), g)
	g, err = ResolveGroup("239.1.2.3", "office", v4)
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("239.1.2.3"), g)
	for _, tt := range []struct{ group, want string }{
		{"239.1.2", "not an IP address"},
		{"198.18.0.9", "not a multicast address"},
		{"ff02::1:2", "not of one IP family"},
	} {
		_, err := ResolveGroup(tt.group, "office", v4)
		require.Error(t, err, tt.group)
		assert.Contains(t, err.Error(), tt.want)
	}
}
