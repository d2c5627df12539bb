package udp

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"text/template"

	sockaddr "github.com/hashicorp/go-sockaddr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeInterfaces is a host's interface table for bind tests, so they neither
// depend on nor touch this machine's network.
func fakeInterfaces(t *testing.T) bindResolver {
	t.Helper()
	bcast := net.FlagUp | net.FlagBroadcast | net.FlagMulticast
	mk := func(name, cidr string, flags net.Flags) sockaddr.IfAddr {
		sa, err := sockaddr.NewSockAddr(cidr)
		require.NoError(t, err)
		return sockaddr.IfAddr{SockAddr: sa, Interface: net.Interface{Name: name, Flags: flags}}
	}
	ifs := sockaddr.IfAddrs{
		mk("lo", "127.0.0.1/8", net.FlagUp|net.FlagLoopback),
		mk("eth0", "198.18.0.10/24", bcast),
		mk("eth0", "fd00::10/64", bcast),
		mk("eth0", "fe80::10/64", bcast),
		mk("wg0", "fd01::1/64", net.FlagUp|net.FlagPointToPoint),
		mk("eth1", "198.19.1.5/20", bcast),
		mk("tun0", "198.18.5.1/32", net.FlagUp|net.FlagPointToPoint),
		mk("p2p0", "198.18.6.0/31", bcast),
	}
	all := func() (sockaddr.IfAddrs, error) { return ifs, nil }
	private := func() (sockaddr.IfAddrs, error) {
		out, _, err := sockaddr.IfByFlag("forwardable", ifs)
		return out, err
	}
	return bindResolver{
		interfaces: all,
		sources:    template.FuncMap{"GetAllInterfaces": all, "GetPrivateInterfaces": private},
	}
}

func TestResolveBind(t *testing.T) {
	r := fakeInterfaces(t)
	tests := []struct {
		name   string
		bind   string
		mode   Mode
		addr   string
		bcast  string
		prefix string
		ifname string
	}{
		{"literal, broadcast", "198.18.0.10", ModeBroadcast, "198.18.0.10", "198.18.0.255", "198.18.0.0/24", "eth0"},
		{"literal, /20 subnet", "198.19.1.5", ModeBroadcast, "198.19.1.5", "198.19.15.255", "198.19.0.0/20", "eth1"},
		{"literal, unicast needs no interface", "127.0.0.1", ModeUnicast, "127.0.0.1", "", "", ""},
		{"template picks one", `{{ GetPrivateInterfaces | include "network" "198.18.0.0/24" | attr "address" }}`, ModeBroadcast, "198.18.0.10", "198.18.0.255", "198.18.0.0/24", "eth0"},
		{"template with limit 1", `{{ GetAllInterfaces | include "type" "IPv4" | include "flags" "broadcast" | limit 1 | attr "address" }}`, ModeBroadcast, "198.18.0.10", "198.18.0.255", "198.18.0.0/24", "eth0"},
		{"template by name", `{{ GetAllInterfaces | include "name" "eth1" | attr "address" }}`, ModeUnicast, "198.19.1.5", "", "", ""},
		{"surrounding spaces", "  198.18.0.10 \n", ModeUnicast, "198.18.0.10", "", "", ""},
		{"IPv4 multicast", "198.18.0.10", ModeMulticast, "198.18.0.10", "", "", "eth0"},
		{"IPv6 multicast", "fd00::10", ModeMulticast, "fd00::10", "", "", "eth0"},
		{"IPv6 template", `{{ GetAllInterfaces | include "network" "fd00::/64" | attr "address" }}`, ModeMulticast, "fd00::10", "", "", "eth0"},
		{"IPv6 unicast needs no interface", "fd00::10", ModeUnicast, "fd00::10", "", "", ""},
		{"IPv6 in brackets", "[fd00::10]", ModeUnicast, "fd00::10", "", "", ""},
		{"IPv6 link-local gets its zone", "fe80::10", ModeUnicast, "fe80::10%eth0", "", "", "eth0"},
		{"IPv6 link-local multicast", "fe80::10", ModeMulticast, "fe80::10%eth0", "", "", "eth0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.resolve(tt.bind, tt.mode)
			require.NoError(t, err)
			assert.Equal(t, tt.addr, got.Addr.String())
			assert.Equal(t, tt.ifname, got.Interface)
			if tt.bcast == "" {
				assert.False(t, got.Broadcast.IsValid())
				return
			}
			assert.Equal(t, tt.bcast, got.Broadcast.String())
			assert.Equal(t, tt.prefix, got.Prefix.String())
			assert.NotEmpty(t, got.Interface)
		})
	}
}

func TestResolveBindErrors(t *testing.T) {
	r := fakeInterfaces(t)
	tests := []struct {
		name string
		bind string
		mode Mode
		want []string
	}{
		{"zero results", `{{ GetAllInterfaces | include "network" "10.9.0.0/16" | attr "address" }}`, ModeUnicast,
			[]string{"resolved to no address", "ip addr", `include "network"`}},
		{"several results", `{{ GetAllInterfaces | include "type" "IPv4" | attr "address" }}`, ModeUnicast,
			[]string{"resolved to 5 addresses (127.0.0.1, 198.18.0.10, 198.19.1.5, 198.18.5.1, 198.18.6.0)", "limit 1"}},
		{"default bind with two private interfaces", "", ModeUnicast,
			[]string{"resolved to 4 addresses (198.18.0.10, 198.19.1.5, 198.18.5.1, 198.18.6.0)"}},
		{"IPv6 for broadcast", `{{ GetAllInterfaces | include "network" "fd00::/64" | attr "address" }}`, ModeBroadcast,
			[]string{"resolved to fd00::10: IPv6 has no broadcast", "transport multicast"}},
		{"not an address", "eth0", ModeUnicast, []string{`resolved to "eth0", which is not an IP address`, "GetAllInterfaces"}},
		{"bad template", "{{ GetNothing }}", ModeUnicast, []string{"parse template", "GetNothing"}},
		{"unspecified", "0.0.0.0", ModeUnicast, []string{"not an interface address"}},
		{"unspecified IPv6", "::", ModeUnicast, []string{"not an interface address"}},
		{"multicast address", "ff02::1", ModeMulticast, []string{"not an interface address"}},
		{"limited broadcast", "255.255.255.255", ModeUnicast, []string{"not an interface address"}},
		{"/32 for broadcast", "198.18.5.1", ModeBroadcast, []string{"198.18.5.1/32", "/31 and /32 cannot broadcast", "peers"}},
		{"/31 for broadcast", "198.18.6.0", ModeBroadcast, []string{"198.18.6.0/31", "/31 and /32"}},
		{"loopback for broadcast", "127.0.0.1", ModeBroadcast, []string{"interface lo (127.0.0.1) does not support broadcast", "multicast", "peers"}},
		{"loopback for multicast", "127.0.0.1", ModeMulticast, []string{"interface lo (127.0.0.1) does not support multicast", "unicast"}},
		{"point-to-point for multicast", "fd01::1", ModeMulticast, []string{"interface wg0 (fd01::1) does not support multicast"}},
		{"not on this host", "198.18.9.9", ModeBroadcast, []string{"198.18.9.9 is not an address of any interface"}},
		{"IPv6 not on this host", "fd00::99", ModeMulticast, []string{"fd00::99 is not an address of any interface"}},
		{"link-local not on this host", "fe80::99", ModeUnicast, []string{"fe80::99 is not an address of any interface"}},
		{"link-local on the wrong interface", "fe80::10%eth1", ModeMulticast, []string{"fe80::10%eth1 is not an address of any interface"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.resolve(tt.bind, tt.mode)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestResolveBindPrefixOutput(t *testing.T) {
	r := fakeInterfaces(t)
	got, err := r.resolve(`{{ GetAllInterfaces | include "name" "eth0" | include "type" "IPv4" | attr "string" }}`, ModeBroadcast)
	require.NoError(t, err)
	assert.Equal(t, netip.MustParsePrefix("198.18.0.0/24"), got.Prefix)
	assert.Equal(t, netip.MustParseAddr("198.18.0.255"), got.Broadcast)
}

// TestResolveBindNotUp: only "no such address here" errors are marked as
// ones a booting node may wait out.
func TestResolveBindNotUp(t *testing.T) {
	_, err := ResolveBind("198.18.255.254", ModeBroadcast) // in the test range, on no interface
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrAddressNotUp)
	assert.Contains(t, err.Error(), "is not an address of any interface here")
	_, err = ResolveBind("not-an-ip", ModeBroadcast)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrAddressNotUp)
	_, err = ResolveBind(`{{ GetAllInterfaces | include "network" "198.18.255.0/24" | attr "address" }}`, ModeUnicast)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrAddressNotUp)
}

// Issue 25 item 7: the fix a bind error suggests is never the template that
// just failed. A node whose bind is the docs' example template (a LAN of
// 192.168.1.0/24 it is not on) used to be told to write exactly that; it is
// now shown this host's own addresses and a template for one of them, which
// resolves here.
func TestResolveBindErrorSuggestsThisHostsAddresses(t *testing.T) {
	r := fakeInterfaces(t)
	for _, bind := range []string{
		`{{ GetPrivateInterfaces | include "network" "192.168.1.0/24" | attr "address" }}`,
		`{{ GetAllInterfaces | include "network" "198.18.0.0/24" | include "name" "eth9" | attr "address" }}`,
		"eth0",
	} {
		_, err := r.resolve(bind, ModeBroadcast)
		require.Error(t, err)
		msg := err.Error()
		assert.Contains(t, msg, "198.18.0.10 (eth0, 198.18.0.0/24)", "names this host's addresses")
		assert.Contains(t, msg, "198.19.1.5 (eth1, 198.19.0.0/20)")
		assert.NotContains(t, msg, "127.0.0.1", "not loopback")
		tmpl := suggestedTemplate(t, msg)
		assert.NotEqual(t, bind, tmpl, "the template that failed is not suggested")
		got, err := r.resolve(tmpl, ModeBroadcast)
		require.NoError(t, err, "the suggested %s resolves here", tmpl)
		assert.Equal(t, "198.18.0.10", got.Addr.String())
	}

	// Several addresses: the suggestion narrows to the first one's network.
	_, err := r.resolve(`{{ GetAllInterfaces | include "type" "IPv4" | include "flags" "broadcast" | attr "address" }}`, ModeBroadcast)
	require.Error(t, err)
	tmpl := suggestedTemplate(t, err.Error())
	got, err := r.resolve(tmpl, ModeBroadcast)
	require.NoError(t, err, "the suggested %s resolves here", tmpl)
	assert.Equal(t, "198.18.0.10", got.Addr.String())

	// A host with no usable address says so, and suggests no template.
	r.interfaces = func() (sockaddr.IfAddrs, error) { return nil, nil }
	r.sources = template.FuncMap{"GetAllInterfaces": r.interfaces, "GetPrivateInterfaces": r.interfaces}
	for _, bind := range []string{"198.18.0.10", `{{ GetAllInterfaces | attr "address" }}`} {
		_, err = r.resolve(bind, ModeBroadcast)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no interface of this host has a usable address now")
		assert.NotContains(t, err.Error(), "e.g.")
	}
}

// suggestedTemplate returns the template after "e.g. " in msg.
func suggestedTemplate(t *testing.T, msg string) string {
	t.Helper()
	_, after, ok := strings.Cut(msg, "e.g. ")
	require.True(t, ok, "a template is suggested: %s", msg)
	end := strings.Index(after, "}}")
	require.GreaterOrEqual(t, end, 0, msg)
	return after[:end+2]
}
