package udp

import (
	"net/netip"
	"time"
)

// ReplyAddr returns the address directed messages to node id go to (the
// reply-address table), and whether there is one.
func (e *Elector) ReplyAddr(id string) (netip.AddrPort, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.addrs[id]
	return a, ok
}

// NextDeadline returns when the run loop next has something to do on its
// own: the node's next deadline, in the Elector's clock.
func (e *Elector) NextDeadline() time.Time { return e.nextTick() }
