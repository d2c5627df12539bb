package udp

import (
	"log/slog"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/lanleader/lanleader/election/udp/wire"
)

// authWarnEvery bounds the authentication WARN lines: one per sender
// address per this long.
const authWarnEvery = 10 * time.Second

// maxAuthAddrs bounds the per-address table; when full it starts over, so a
// flood from forged addresses costs memory once and lines at most once per
// authWarnEvery per address.
const maxAuthAddrs = 256

// authLog names, at WARN, each address whose packets fail authentication
// or that signs while this node has no key: two nodes configured
// differently, which would otherwise each lead silently.
type authLog struct {
	last map[netip.Addr]time.Time
	// unchecked counts signed packets accepted without a key.
	unchecked atomic.Uint64
	// lastFailure is the newest packet that failed authentication (run
	// loop only): a node that hears nobody names it as the likely cause.
	lastFailure authFailure
	// signedAt is, per address, when it last sent a signed packet while
	// this node has no key (run loop only): that node drops ours.
	signedAt map[netip.Addr]time.Time
}

// authFailure is one packet that failed authentication.
type authFailure struct {
	at     time.Time
	from   netip.AddrPort
	reason string
}

// causes maps a drop reason to the likely misconfiguration.
var authCauses = map[string]string{
	wire.ReasonBadMAC:   "its MAC matches none of this node's keys: the sender uses a different key (compare secret_file on both nodes)",
	wire.ReasonUnsigned: "it is unsigned while this node requires a key: the sender runs without secret_file",
}

// failed logs a packet that failed authentication with reason.
func (a *authLog) failed(log *slog.Logger, now time.Time, from netip.AddrPort, reason string) {
	cause, ok := authCauses[reason]
	if ok {
		a.lastFailure = authFailure{at: now, from: from, reason: reason}
	}
	if ok && a.due(now, from.Addr()) {
		log.Warn("packet failed authentication", "from", from.String(), "reason", reason, "cause", cause)
	}
}

// signed notes a signed packet reaching a node without a key: accepted
// unchecked here, while the sender drops this node's unsigned packets.
func (a *authLog) signed(log *slog.Logger, now time.Time, from netip.AddrPort) {
	a.unchecked.Add(1)
	if a.signedAt == nil || len(a.signedAt) >= maxAuthAddrs {
		a.signedAt = make(map[netip.Addr]time.Time)
	}
	a.signedAt[from.Addr()] = now
	if a.due(now, from.Addr()) {
		log.Warn("packet is signed but this node has no key", "from", from.String(), "reason", "signed_without_key",
			"cause", "the sender uses secret_file and this node does not: it drops this node's packets as unsigned")
	}
}

func (a *authLog) due(now time.Time, addr netip.Addr) bool {
	if a.last == nil || len(a.last) >= maxAuthAddrs {
		a.last = make(map[netip.Addr]time.Time)
	}
	if t, ok := a.last[addr]; ok && now.Sub(t) < authWarnEvery {
		return false
	}
	a.last[addr] = now
	return true
}

// failedSince returns the newest packet that failed authentication at or
// after since, if any.
func (a *authLog) failedSince(since time.Time) (authFailure, bool) {
	f := a.lastFailure
	return f, !f.at.IsZero() && !f.at.Before(since)
}

// signsSince reports whether addr sent a signed packet to this node, which
// has no key, at or after since.
func (a *authLog) signsSince(addr netip.Addr, since time.Time) bool {
	t, ok := a.signedAt[addr]
	return ok && !t.Before(since)
}
