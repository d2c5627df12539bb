package static

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

// name is one of this node's names, with what it is for the log.
type name struct {
	kind, value string
}

func (n name) String() string { return fmt.Sprintf("%s %q", n.kind, n.value) }

// decision is whether this node leads and why, in words for the log.
type decision struct {
	leads bool
	// matched names the name or address that matched, when leads.
	matched string
	// compared lists everything Leader was compared with, when not leads.
	compared []string
}

func (d decision) reason(leader string) string {
	if d.leads {
		return fmt.Sprintf("leader %q matches this node's %s", leader, d.matched)
	}
	return fmt.Sprintf("leader %q matches none of this node's names and addresses: %s",
		leader, strings.Join(d.compared, ", "))
}

// normalizeName drops surrounding space and the trailing dot of an absolute
// DNS name. Case is kept for the log; comparisons ignore it.
func normalizeName(s string) string {
	return strings.TrimSuffix(strings.TrimSpace(s), ".")
}

// shortName is the first label of a dotted hostname.
func shortName(s string) string {
	if i := strings.IndexByte(s, '.'); i > 0 {
		return s[:i]
	}
	return s
}

// validateLeader checks Leader before any lookup, so a typo is a config
// error rather than a node that silently never leads.
func validateLeader(leader string) (netip.Addr, error) {
	if leader == "" {
		return netip.Addr{}, fmt.Errorf("static: leader is required (this node's hostname, FQDN, node id or IP address)")
	}
	if ip, err := netip.ParseAddr(leader); err == nil {
		ip = ip.Unmap().WithZone("")
		if ip.IsLoopback() || ip.IsUnspecified() {
			// Every machine has these: each node would lead.
			return netip.Addr{}, fmt.Errorf("static: leader %q is an address every node has; name the leader's hostname or LAN address", leader)
		}
		return ip, nil
	}
	if strings.ContainsAny(leader, " \t\r\n/:@,;") {
		return netip.Addr{}, fmt.Errorf("static: leader %q is neither a hostname nor an IP address", leader)
	}
	return netip.Addr{}, nil
}

// nameMatch returns the first of names equal to leader, case-insensitive.
func nameMatch(leader string, names []name) (name, bool) {
	for _, n := range names {
		if n.value != "" && strings.EqualFold(leader, n.value) {
			return n, true
		}
	}
	return name{}, false
}

// withShort appends n and, when it differs, n's short form.
func withShort(names []name, kind, value string) []name {
	value = normalizeName(value)
	if value == "" {
		return names
	}
	names = append(names, name{kind, value})
	if s := shortName(value); s != value {
		names = append(names, name{"short " + kind, s})
	}
	return names
}

// decide compares leader with this node's names, then (if leader is an IP)
// with its interface addresses, then (if the node goes by its hostname)
// with its FQDN, looked up last because it may need DNS. host is the
// hostname when the node goes by it, empty when the node id overrides it.
func decide(ctx context.Context, cfg Config, leader string, leaderIP netip.Addr, nodeID, host string) (decision, error) {
	var names []name
	if host != "" {
		names = withShort(names, "hostname", host)
	} else {
		names = withShort(names, "node id", nodeID)
	}
	if n, ok := nameMatch(leader, names); ok {
		return decision{leads: true, matched: n.String()}, nil
	}
	var compared []string
	for _, n := range names {
		compared = append(compared, n.String())
	}

	if leaderIP.IsValid() {
		addrs, err := cfg.InterfaceAddrs()
		if err != nil {
			return decision{}, fmt.Errorf("static: leader %q is an IP address but this node's addresses are unknown: %w", leader, err)
		}
		var mine []string
		for _, a := range addrs {
			a = a.Unmap().WithZone("")
			if a == leaderIP {
				return decision{leads: true, matched: "interface address " + a.String()}, nil
			}
			mine = append(mine, a.String())
		}
		compared = append(compared, fmt.Sprintf("addresses [%s]", strings.Join(mine, " ")))
		// An IP is not a hostname: no FQDN to compare.
		return decision{compared: compared}, nil
	}

	if host != "" {
		fqdn, err := cfg.FQDN(ctx, host)
		fqdn = normalizeName(fqdn)
		switch {
		case err != nil:
			compared = append(compared, fmt.Sprintf("FQDN (unknown: %v)", err))
		case fqdn == "" || strings.EqualFold(fqdn, host):
			// Nothing new to compare.
		default:
			var fqdnNames []name
			for _, n := range withShort(nil, "FQDN", fqdn) {
				if _, dup := nameMatch(n.value, names); !dup {
					fqdnNames = append(fqdnNames, n)
				}
			}
			if n, ok := nameMatch(leader, fqdnNames); ok {
				return decision{leads: true, matched: n.String()}, nil
			}
			for _, n := range fqdnNames {
				compared = append(compared, n.String())
			}
		}
	}
	return decision{compared: compared}, nil
}
