package udp

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// hearingWarnEvery bounds how often one persisting hearing problem is
// logged again.
const hearingWarnEvery = 10 * time.Second

// hearingLog turns protocol.Hearing into log lines: WARN when a problem
// appears and every hearingWarnEvery while it lasts, INFO when it clears.
// It runs in the run loop only.
type hearingLog struct {
	// expectPeers: a node configured with peers or a cluster size that
	// hears nobody is worth a WARN; a lone broadcast node is not.
	expectPeers bool
	isolatedAt  time.Time
	rivalAt     time.Time
	rivalID     string
	dupAt       time.Time
	deafAt      map[string]time.Time
}

func (l *hearingLog) due(last *time.Time, now time.Time) bool {
	if !last.IsZero() && now.Sub(*last) < hearingWarnEvery {
		return false
	}
	*last = now
	return true
}

// report logs what changed in h since the last call; auth tells a key
// mismatch from a firewall.
func (l *hearingLog) report(log *slog.Logger, now time.Time, h protocol.Hearing, leader string, auth *authLog) {
	silent := h.SilentFor.Round(time.Millisecond)
	switch {
	case h.Deaf:
		if l.due(&l.isolatedAt, now) {
			log.Warn("isolated: this node's own broadcasts do not come back; it cannot receive and will not lead",
				"silent_for", silent.String(), "cause", "inbound UDP to the election port is dropped on this host (firewall?)")
		}
	case h.Isolated && l.expectPeers:
		if l.due(&l.isolatedAt, now) {
			log.Warn("isolated: no valid packet from any other node", append([]any{"silent_for", silent.String()},
				isolatedCause(h, auth)...)...)
		}
	case !l.isolatedAt.IsZero():
		l.isolatedAt = time.Time{}
		log.Info("hearing other nodes again")
	}

	if r := h.Rival; r.ID != "" {
		if r.ID != l.rivalID || l.due(&l.rivalAt, now) {
			l.rivalID, l.rivalAt = r.ID, now
			why := "its term is lower than the known leader's"
			if r.Higher {
				why = "it shows no sign of hearing the known leader"
			}
			log.Warn("rival leader: ignoring its heartbeats", "rival", r.ID, "addr", r.Addr, "rival_term", r.Term,
				"leader", leader, "why", why)
		}
	} else {
		l.rivalID, l.rivalAt = "", time.Time{}
	}

	seen := make(map[string]bool, len(h.DeafPeers))
	for _, p := range h.DeafPeers {
		seen[p.ID] = true
		if l.deafAt == nil {
			l.deafAt = make(map[string]time.Time)
		}
		last := l.deafAt[p.ID]
		if l.due(&last, now) {
			why := "its messages show no sign of hearing the leader"
			if p.SelfReported {
				why = "it reports hearing no other node"
			}
			log.Warn("peer does not hear the cluster", "peer", p.ID, "addr", p.Addr, "why", why,
				"cause", deafPeerCause(p, now, auth))
		}
		l.deafAt[p.ID] = last
	}
	for id := range l.deafAt {
		if !seen[id] {
			delete(l.deafAt, id)
		}
	}

	if d := h.Duplicate; d.Incarnation != 0 {
		if l.due(&l.dupAt, now) {
			role := "this process started later: it will not lead while it hears the other"
			switch {
			case d.Withheld:
				role = "quorum mode: this process no longer votes, acknowledges or leads; restart it once its id is unique"
			case d.First:
				role = "this process started first: it keeps its role"
			}
			log.Error("another process uses this node id", "addr", d.Addr, "its_incarnation", d.Incarnation, "role", role,
				"cause", "two nodes configured with one node_id; give each a unique one")
		}
	} else {
		l.dupAt = time.Time{}
	}
}

// isolatedCause names why a node hears no other node, as log attributes:
// another process with its id is all it hears, or the others' packets
// fail authentication (a key differs), or, when neither shows, what
// remains (inbound UDP dropped, a partition, every other node down).
func isolatedCause(h protocol.Hearing, auth *authLog) []any {
	if d := h.Duplicate; d.Incarnation != 0 {
		return []any{"cause", "another process with this node id is heard at " + d.Addr +
			" (its packets are not another node's); give each node its own node_id"}
	}
	if f, ok := auth.failedSince(h.LastHeard); ok {
		return []any{"cause", "packets from other nodes failed authentication (" + authCauses[f.reason] + ")",
			"from", f.from.String(), "reason", f.reason}
	}
	return []any{"cause", "inbound UDP dropped on this host, a partition, or every other node down"}
}

// deafPeerCause names why peer p does not hear this node: it signed its
// packets lately while this node has no key, so it drops ours; else a
// firewall or a one-way link.
func deafPeerCause(p protocol.DeafPeer, now time.Time, auth *authLog) string {
	if a, err := netip.ParseAddrPort(p.Addr); err == nil && auth.signsSince(a.Addr(), now.Add(-hearingWarnEvery)) {
		return p.ID + " uses secret_file and this node does not: it drops this node's unsigned packets; give every node the same secret_file"
	}
	return "inbound UDP dropped on that host (firewall?) or a one-way link"
}
