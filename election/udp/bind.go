package udp

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"text/template"

	sockaddr "github.com/hashicorp/go-sockaddr"
	sockaddrtemplate "github.com/hashicorp/go-sockaddr/template"
)

// DefaultBind is the Bind used when none is given: the host's private IPv4
// address on the interface with the default route. On a host with several
// (a LAN and a Docker bridge, say) it resolves to more than one address and
// NewUDPTransport asks for an explicit choice rather than guessing.
const DefaultBind = `{{ GetPrivateInterfaces | include "type" "IPv4" | attr "address" }}`

// BindAddr is what a Bind setting resolved to.
type BindAddr struct {
	// Addr is the IPv4 or IPv6 address to bind; an IPv6 link-local address
	// carries its interface as zone.
	Addr netip.Addr
	// Prefix is Addr's subnet on its interface; zero if not looked up
	// (unicast mode with a literal address).
	Prefix netip.Prefix
	// Broadcast is the subnet's directed broadcast address; zero unless
	// the mode is broadcast.
	Broadcast netip.Addr
	// Interface names the interface holding Addr, when looked up
	// (broadcast and multicast, and IPv6 link-local addresses).
	Interface string
}

// ResolveBind resolves bind, an IPv4 or IPv6 address or a go-sockaddr
// template, to exactly one address of this host, for transport mode (which
// must be resolved: broadcast, multicast or unicast). Broadcast needs IPv4
// and finds the address's subnet and its directed broadcast address,
// rejecting /31 and /32 subnets and interfaces without broadcast (loopback,
// point-to-point). Multicast finds the interface to join the group on,
// which must support multicast. It reads the host's interface table and
// sends nothing.
//
// Unlike go-sockaddr's own `attr`, which silently takes the first of several
// interfaces, `attr` here yields every address it is given, so a template
// that matches two interfaces is an error instead of a coin toss; end the
// pipeline with `| limit 1` to take the first on purpose.
func ResolveBind(bind string, mode Mode) (BindAddr, error) {
	return bindResolver{}.resolve(bind, mode)
}

// ErrAddressNotUp matches (errors.Is) the ResolveBind errors that can go
// away by themselves: no interface has the address yet. A daemon that
// starts before its network waits and retries on them; every other bind
// error is a wrong setting.
var ErrAddressNotUp = errors.New("address not up")

type notUp struct{ error }

func (e notUp) Unwrap() []error { return []error{e.error, ErrAddressNotUp} }

// bindResolver evaluates Bind settings. Its zero value uses the host's
// interfaces; tests replace interfaces and the template sources with a fake
// table so they never depend on (or touch) the machine's network.
type bindResolver struct {
	interfaces func() (sockaddr.IfAddrs, error)
	sources    template.FuncMap
}

// help says what to write instead of bind: an address of this host or a
// template for one, built from this host's own interfaces (never the
// template that just failed, which an example in the docs could be).
func (r bindResolver) help(bind string) string {
	ifs, err := r.interfaces()
	var have []string
	var example string
	if err == nil {
		for _, a := range usableAddrs(ifs) {
			have = append(have, fmt.Sprintf("%s (%s, %s)", a.addr, a.ifname, a.prefix))
			if t := networkTemplate(a.prefix); example == "" && t != bind {
				example = t
			}
		}
	}
	switch {
	case len(have) == 0:
		return "no interface of this host has a usable address now"
	case len(have) > maxSuggested:
		have = append(have[:maxSuggested], "...")
	}
	return fmt.Sprintf("write an address of this host or a template that yields exactly one; this host has %s: e.g. %s",
		strings.Join(have, ", "), example)
}

// maxSuggested bounds how many of this host's addresses a bind error names.
const maxSuggested = 4

// networkTemplate is a bind template that yields this host's address in
// prefix.
func networkTemplate(prefix netip.Prefix) string {
	return fmt.Sprintf(`{{ GetAllInterfaces | include "network" %q | attr "address" }}`, prefix.String())
}

// hostAddr is one address of this host that a bind could name.
type hostAddr struct {
	addr   netip.Addr
	prefix netip.Prefix
	ifname string
}

// usableAddrs lists the addresses a node could bind, IPv4 first: on an
// interface that is up, not loopback, not link-local.
func usableAddrs(ifs sockaddr.IfAddrs) []hostAddr {
	var v4, v6 []hostAddr
	for _, a := range ifs {
		ip, ok := ifIP(a)
		if !ok || a.Flags&net.FlagUp == 0 || a.Flags&net.FlagLoopback != 0 || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			continue
		}
		bits := 0
		if v4a := sockaddr.ToIPv4Addr(a.SockAddr); v4a != nil {
			bits = v4a.Maskbits()
		} else if v6a := sockaddr.ToIPv6Addr(a.SockAddr); v6a != nil {
			bits = v6a.Maskbits()
		}
		h := hostAddr{addr: ip, prefix: netip.PrefixFrom(ip, bits).Masked(), ifname: a.Name}
		if ip.Is4() {
			v4 = append(v4, h)
		} else {
			v6 = append(v6, h)
		}
	}
	return append(v4, v6...)
}

func (r bindResolver) resolve(bind string, mode Mode) (BindAddr, error) {
	if r.interfaces == nil {
		r.interfaces = sockaddr.GetAllInterfaces
	}
	bind = strings.TrimSpace(bind)
	if bind == "" {
		bind = DefaultBind
	}
	out := bind
	if strings.Contains(bind, "{{") {
		var err error
		if out, err = r.eval(bind); err != nil {
			return BindAddr{}, fmt.Errorf("udp: bind %q: %w", bind, err)
		}
	}
	fields := strings.Fields(out)
	switch {
	case len(fields) == 0:
		return BindAddr{}, notUp{fmt.Errorf("udp: bind %q resolved to no address (does an interface match? `ip addr` lists them); %s", bind, r.help(bind))}
	case len(fields) > 1:
		return BindAddr{}, fmt.Errorf("udp: bind %q resolved to %d addresses (%s); narrow the template to one network%s, "+
			"or end it with | limit 1 to take the first", bind, len(fields), strings.Join(fields, ", "), r.narrowed(fields[0]))
	}
	var res BindAddr
	if p, err := netip.ParsePrefix(fields[0]); err == nil {
		res.Addr, res.Prefix = p.Addr(), p.Masked()
	} else if a, err := netip.ParseAddr(strings.Trim(fields[0], "[]")); err == nil {
		res.Addr = a
	} else {
		return BindAddr{}, fmt.Errorf("udp: bind %q resolved to %q, which is not an IP address; %s", bind, fields[0], r.help(bind))
	}
	res.Addr = res.Addr.Unmap()
	if res.Addr.IsUnspecified() || res.Addr.IsMulticast() || res.Addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return BindAddr{}, fmt.Errorf("udp: bind %q resolved to %s, which is not an interface address; %s", bind, res.Addr, r.help(bind))
	}
	switch {
	case mode == ModeBroadcast && !res.Addr.Is4():
		return BindAddr{}, fmt.Errorf("udp: bind %q resolved to %s: IPv6 has no broadcast; use transport multicast (or unicast with peers), or an IPv4 address", bind, res.Addr)
	case mode == ModeBroadcast:
		return r.broadcast(bind, res)
	case mode == ModeMulticast:
		return r.multicast(bind, res)
	case res.Addr.Is6() && res.Addr.IsLinkLocalUnicast() && res.Addr.Zone() == "":
		// A link-local address means nothing without its interface.
		f, err := r.locate(bind, res)
		if err != nil {
			return BindAddr{}, err
		}
		res.Interface, res.Addr = f.Name, res.Addr.WithZone(f.Name)
	}
	return res, nil
}

// narrowed suggests a template for the network of first, an address a
// template yielded among others: " (e.g. ...)", or "" if it is not one of
// this host's usable addresses.
func (r bindResolver) narrowed(first string) string {
	ip, err := netip.ParseAddr(strings.Trim(first, "[]"))
	if p, perr := netip.ParsePrefix(first); perr == nil {
		ip, err = p.Addr(), nil
	}
	ifs, ierr := r.interfaces()
	if err != nil || ierr != nil {
		return ""
	}
	for _, a := range usableAddrs(ifs) {
		if a.addr == ip.Unmap() {
			return fmt.Sprintf(" (for %s, e.g. %s)", a.addr, networkTemplate(a.prefix))
		}
	}
	return ""
}

// locate finds the interface that holds res.Addr.
func (r bindResolver) locate(bind string, res BindAddr) (*sockaddr.IfAddr, error) {
	ifs, err := r.interfaces()
	if err != nil {
		return nil, fmt.Errorf("udp: bind %q: list interfaces: %w", bind, err)
	}
	want := res.Addr.WithZone("")
	for i := range ifs {
		if ip, ok := ifIP(ifs[i]); ok && ip == want {
			if z := res.Addr.Zone(); z != "" && z != ifs[i].Name {
				continue
			}
			return &ifs[i], nil
		}
	}
	return nil, notUp{fmt.Errorf("udp: bind %q: %s is not an address of any interface here; broadcast and multicast need the interface; %s",
		bind, res.Addr, r.help(bind))}
}

// ifIP is an interface address's IP.
func ifIP(a sockaddr.IfAddr) (netip.Addr, bool) {
	if v4 := sockaddr.ToIPv4Addr(a.SockAddr); v4 != nil {
		return netip.AddrFromSlice((*v4.NetIP()).To4())
	}
	if v6 := sockaddr.ToIPv6Addr(a.SockAddr); v6 != nil {
		return netip.AddrFromSlice(*v6.NetIP())
	}
	return netip.Addr{}, false
}

// multicast fills in the interface to join the group on.
func (r bindResolver) multicast(bind string, res BindAddr) (BindAddr, error) {
	found, err := r.locate(bind, res)
	if err != nil {
		return BindAddr{}, err
	}
	if found.Flags&net.FlagMulticast == 0 {
		return BindAddr{}, fmt.Errorf("udp: bind %q: interface %s (%s) does not support multicast; use transport unicast with peers instead",
			bind, found.Name, res.Addr)
	}
	res.Interface = found.Name
	if res.Addr.Is6() && res.Addr.IsLinkLocalUnicast() {
		res.Addr = res.Addr.WithZone(found.Name)
	}
	return res, nil
}

// broadcast fills in the subnet, interface and directed broadcast address.
func (r bindResolver) broadcast(bind string, res BindAddr) (BindAddr, error) {
	found, err := r.locate(bind, res)
	if err != nil {
		return BindAddr{}, err
	}
	v4 := sockaddr.ToIPv4Addr(found.SockAddr)
	res.Interface = found.Name
	if !res.Prefix.IsValid() {
		res.Prefix = netip.PrefixFrom(res.Addr, v4.Maskbits()).Masked()
	}
	if res.Prefix.Bits() >= 31 {
		return BindAddr{}, fmt.Errorf("udp: bind %q: subnet %s of %s has no broadcast address (/31 and /32 cannot broadcast); list the other nodes with peers (unicast) instead",
			bind, res.Prefix, found.Name)
	}
	if found.Flags&net.FlagBroadcast == 0 {
		return BindAddr{}, fmt.Errorf("udp: bind %q: interface %s (%s) does not support broadcast (loopback or point-to-point); use transport multicast, or list the other nodes with peers (unicast) instead",
			bind, found.Name, res.Addr)
	}
	sa, err := sockaddr.NewIPv4Addr(res.Prefix.String())
	if err != nil {
		return BindAddr{}, fmt.Errorf("udp: bind %q: %w", bind, err)
	}
	bc := sockaddr.ToIPv4Addr(sa.Broadcast())
	res.Broadcast, _ = netip.AddrFromSlice((*bc.NetIP()).To4())
	return res, nil
}

// eval runs a go-sockaddr template with the strict attr.
func (r bindResolver) eval(bind string) (string, error) {
	ifs, err := r.interfaces()
	if err != nil {
		return "", fmt.Errorf("list interfaces: %w", err)
	}
	tmpl, err := template.New("bind").Option("missingkey=error").
		Funcs(sockaddrtemplate.SourceFuncs).
		Funcs(sockaddrtemplate.SortFuncs).
		Funcs(sockaddrtemplate.FilterFuncs).
		Funcs(sockaddrtemplate.HelperFuncs).
		Funcs(template.FuncMap{"attr": strictAttr}).
		Funcs(r.sources).
		Parse(bind)
	if err != nil {
		return "", fmt.Errorf("parse template: %w", err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, ifs); err != nil {
		return "", fmt.Errorf("evaluate template: %w", err)
	}
	return out.String(), nil
}

// strictAttr is go-sockaddr's attr, except that given several interfaces it
// yields the attribute of each, space-separated, so "exactly one" can be
// checked.
func strictAttr(name string, v any) (string, error) {
	if ifs, ok := v.(sockaddr.IfAddrs); ok && len(ifs) > 1 {
		return sockaddr.JoinIfAddrs(name, " ", ifs)
	}
	return sockaddrtemplate.Attr(name, v)
}
