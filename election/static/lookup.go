package static

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	sockaddr "github.com/hashicorp/go-sockaddr"
)

// fqdnTimeout bounds the default FQDN lookup, so a machine without working
// DNS still starts promptly (it then just has no FQDN to compare).
const fqdnTimeout = 3 * time.Second

// lookupFQDN is the default Config.FQDN: the canonical name the resolver
// (hosts file or DNS) gives for hostname.
func lookupFQDN(ctx context.Context, hostname string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, fqdnTimeout)
	defer cancel()
	cname, err := net.DefaultResolver.LookupCNAME(ctx, hostname)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(cname, "."), nil
}

// interfaceAddrs is the default Config.InterfaceAddrs.
func interfaceAddrs() ([]netip.Addr, error) {
	ifaddrs, err := sockaddr.GetAllInterfaces()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	var out []netip.Addr
	for _, ifa := range ifaddrs {
		ipa := sockaddr.ToIPAddr(ifa.SockAddr)
		if ipa == nil {
			continue
		}
		if a, ok := netip.AddrFromSlice(*(*ipa).NetIP()); ok {
			out = append(out, a.Unmap())
		}
	}
	return out, nil
}
