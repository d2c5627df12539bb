package static

import (
	"context"
	"log/slog"
	"net/netip"
)

// Config configures a static Elector. Leader is required; the lookups
// default to this machine's and exist so tests do not depend on it.
type Config struct {
	// NodeID is this node's id. Default: the hostname. A node id other
	// than the hostname overrides it: the hostname and FQDN are then not
	// compared, so several instances on one machine can be told apart. A
	// node id equal to the hostname (any case) is the hostname, FQDN
	// included.
	NodeID string
	// Leader names the node that leads: a hostname, short or fully
	// qualified (case-insensitive, a trailing dot is ignored), a node id, or
	// an IP address of one of the leader's interfaces. Required.
	Leader string
	// Logger receives the decision and why. Nil means slog.Default().
	// Records carry no node attribute: add one with Logger.With.
	Logger *slog.Logger

	// Hostname returns this machine's hostname. Nil means os.Hostname.
	Hostname func() (string, error)
	// FQDN returns the fully qualified name of hostname. It is called only
	// when no other name matched, and a failure only means there is no FQDN
	// to compare. Nil means a DNS/hosts lookup of hostname's canonical name,
	// bounded by a few seconds.
	FQDN func(ctx context.Context, hostname string) (string, error)
	// InterfaceAddrs returns the addresses of this machine's interfaces.
	// It is called only when Leader is an IP address. Nil means every
	// address go-sockaddr's GetAllInterfaces reports.
	InterfaceAddrs func() ([]netip.Addr, error)
}
