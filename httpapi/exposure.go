package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/lanleader/lanleader/jobs"
)

// exposure is what the endpoint serves, and to which Host names, given
// where it is bound:
//
//   - Host: an IP address (which no DNS answer can rebind) that is a
//     loopback address, the bound address, or any address when bound to all
//     of them; "localhost"; or a name listed in Config.Hosts. Any other name
//     is what DNS rebinding sends (a web page's own name, resolved to this
//     node): refused with 421, so a page the user's browser opens cannot
//     read the endpoint, even on loopback.
//   - Output tails (a run's last output lines, which may hold secrets a
//     job printed) on loopback, where only this host's users can ask;
//     beyond loopback only if Config.OutputTails says so.
type exposure struct {
	// bound is the listener's IP address; invalid when not known
	// (Handler), which allows IP addresses of loopback only.
	bound netip.Addr
	// names are the host names allowed besides "localhost", lower case.
	names []string
	// checkHost is false for Handler, whose server is the caller's.
	checkHost bool
	// outputTails serves runs' output tails.
	outputTails bool
}

// exposureOf returns the exposure of an endpoint listening on addr.
func exposureOf(addr net.Addr, cfg Config) exposure {
	e := exposure{checkHost: true, names: hostNames(cfg.Hosts)}
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
		e.bound = ap.Addr().Unmap()
	}
	e.outputTails = cfg.OutputTails || e.bound.IsLoopback()
	return e
}

// handlerExposure is the exposure of Handler, served by the caller's own
// server: no Host check (the caller's server decides), and output tails
// only if the config opts in, since where it is served is unknown.
func handlerExposure(cfg Config) exposure {
	return exposure{outputTails: cfg.OutputTails}
}

func hostNames(hosts []string) []string {
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, normalHost(h))
	}
	return out
}

// normalHost is a host name as compared: lower case, without the final
// dot of a fully qualified name.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// allowsHost reports whether a request's Host header (host or host:port)
// names this endpoint.
func (e exposure) allowsHost(hostport string) bool {
	if !e.checkHost || hostport == "" {
		// No Host at all (HTTP/1.0): no browser sends that.
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		return ip.IsLoopback() || ip == e.bound || e.bound.IsUnspecified()
	}
	host = normalHost(host)
	return host == "localhost" || slices.Contains(e.names, host)
}

// guard refuses requests whose Host does not name this endpoint (see
// exposure), calling refused for each, before next sees them.
func (e exposure) guard(next http.Handler, refused func(host string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !e.allowsHost(r.Host) {
			refused(r.Host)
			writeText(w, http.StatusMisdirectedRequest, fmt.Sprintf(
				"Host %q does not name this endpoint: use its IP address or localhost, or list the name in election.http_hosts (--http-hosts)", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// statuses returns st, without output tails unless they are served.
func (e exposure) statuses(st []jobs.JobStatus) []jobs.JobStatus {
	if e.outputTails {
		return st
	}
	out := make([]jobs.JobStatus, len(st))
	for i, s := range st {
		if s.LastRun != nil {
			rec := *s.LastRun
			rec.Output = nil
			s.LastRun = &rec
		}
		out[i] = s
	}
	return out
}

// views returns v, without output tails unless they are served.
func (e exposure) views(v []jobs.JobView) []jobs.JobView {
	if e.outputTails {
		return v
	}
	out := make([]jobs.JobView, len(v))
	for i, jv := range v {
		runs := make([]jobs.RunRecord, len(jv.Runs))
		for k, rec := range jv.Runs {
			rec.Output = nil
			runs[k] = rec
		}
		jv.Runs = runs
		out[i] = jv
	}
	return out
}
