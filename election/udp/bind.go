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
	// Addr is the IPv4 address to bind.
	Addr netip.Addr
	// Prefix is Addr's subnet on its interface; zero if not looked up
	// (unicast mode with a literal address).
	Prefix netip.Prefix
	// Broadcast is the subnet's directed broadcast address; zero in unicast
	// mode.
	Broadcast netip.Addr
	// Interface names the interface holding Addr, when looked up.
	Interface string
}

// ResolveBind resolves bind, an IPv4 address or a go-sockaddr template, to
// exactly one IPv4 address of this host. With broadcast set it also finds the
// address's subnet and its directed broadcast address, and rejects /31 and /32
// subnets and interfaces without broadcast (loopback, point-to-point). It
// reads the host's interface table and sends nothing.
//
// Unlike go-sockaddr's own `attr`, which silently takes the first of several
// interfaces, `attr` here yields every address it is given, so a template
// that matches two interfaces is an error instead of a coin toss; end the
// pipeline with `| limit 1` to take the first on purpose.
func ResolveBind(bind string, broadcast bool) (BindAddr, error) {
	return bindResolver{}.resolve(bind, broadcast)
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

const bindHelp = `write an IPv4 address of this host, or a template that yields exactly one, e.g. ` +
	`{{ GetPrivateInterfaces | include "network" "192.168.1.0/24" | attr "address" }}`

func (r bindResolver) resolve(bind string, broadcast bool) (BindAddr, error) {
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
		return BindAddr{}, notUp{fmt.Errorf("udp: bind %q resolved to no address (does an interface match? `ip -4 addr` lists them); %s", bind, bindHelp)}
	case len(fields) > 1:
		return BindAddr{}, fmt.Errorf("udp: bind %q resolved to %d addresses (%s); narrow the template with "+
			`| include "network" "<your LAN's CIDR>", or end it with | limit 1 to take the first`, bind, len(fields), strings.Join(fields, ", "))
	}
	var res BindAddr
	if p, err := netip.ParsePrefix(fields[0]); err == nil {
		res.Addr, res.Prefix = p.Addr(), p.Masked()
	} else if a, err := netip.ParseAddr(fields[0]); err == nil {
		res.Addr = a
	} else {
		return BindAddr{}, fmt.Errorf("udp: bind %q resolved to %q, which is not an IP address; %s", bind, fields[0], bindHelp)
	}
	if !res.Addr.Is4() {
		return BindAddr{}, fmt.Errorf("udp: bind %q resolved to %s, which is not IPv4; add | include \"type\" \"IPv4\" to the template or write an IPv4 address", bind, res.Addr)
	}
	if res.Addr.IsUnspecified() || res.Addr.IsMulticast() || res.Addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return BindAddr{}, fmt.Errorf("udp: bind %q resolved to %s, which is not an interface address; %s", bind, res.Addr, bindHelp)
	}
	if !broadcast {
		return res, nil
	}
	return r.broadcast(bind, res)
}

// broadcast fills in the subnet, interface and directed broadcast address.
func (r bindResolver) broadcast(bind string, res BindAddr) (BindAddr, error) {
	ifs, err := r.interfaces()
	if err != nil {
		return BindAddr{}, fmt.Errorf("udp: bind %q: list interfaces: %w", bind, err)
	}
	var found *sockaddr.IfAddr
	var v4 *sockaddr.IPv4Addr
	for i := range ifs {
		a := sockaddr.ToIPv4Addr(ifs[i].SockAddr)
		if a == nil {
			continue
		}
		ip, ok := netip.AddrFromSlice(*a.NetIP())
		if ok && ip == res.Addr {
			found, v4 = &ifs[i], a
			break
		}
	}
	if found == nil {
		return BindAddr{}, notUp{fmt.Errorf("udp: bind %q: %s is not an address of any interface here; broadcast mode needs the interface's subnet", bind, res.Addr)}
	}
	res.Interface = found.Name
	if !res.Prefix.IsValid() {
		res.Prefix = netip.PrefixFrom(res.Addr, v4.Maskbits()).Masked()
	}
	if res.Prefix.Bits() >= 31 {
		return BindAddr{}, fmt.Errorf("udp: bind %q: subnet %s of %s has no broadcast address (/31 and /32 cannot broadcast); list the other nodes with peers (unicast) instead",
			bind, res.Prefix, found.Name)
	}
	if found.Flags&net.FlagBroadcast == 0 {
		return BindAddr{}, fmt.Errorf("udp: bind %q: interface %s (%s) does not support broadcast (loopback or point-to-point); list the other nodes with peers (unicast) instead",
			bind, found.Name, res.Addr)
	}
	sa, err := sockaddr.NewIPv4Addr(res.Prefix.String())
	if err != nil {
		return BindAddr{}, fmt.Errorf("udp: bind %q: %w", bind, err)
	}
	bc := sockaddr.ToIPv4Addr(sa.Broadcast())
	res.Broadcast, _ = netip.AddrFromSlice(*bc.NetIP())
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
