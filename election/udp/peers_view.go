package udp

import (
	"time"
)

// PeerView is another node heard lately, for the status page.
type PeerView struct {
	ID       string
	Addr     string // where it last sent from; empty if unknown
	Priority uint8
	// Ago is how long since its last accepted message.
	Ago      time.Duration
	Resigned bool
	// Witness: it votes and never leads.
	Witness bool
}

// Peers returns the other nodes heard within ForgetPeerAfter, sorted by id.
func (e *Elector) Peers() []PeerView {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	ps := e.node.Peers(now)
	out := make([]PeerView, len(ps))
	for i, p := range ps {
		out[i] = PeerView{ID: p.ID, Priority: p.Priority, Ago: now.Sub(p.LastHeard), Resigned: p.Resigned, Witness: p.Witness}
		if a, ok := e.addrs[p.ID]; ok {
			out[i].Addr = a.String()
		}
	}
	return out
}
