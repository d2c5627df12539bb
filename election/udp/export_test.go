package udp

import "net/netip"

// ReplyAddr returns the address directed messages to node id go to (the
// reply-address table), and whether there is one.
func (e *Elector) ReplyAddr(id string) (netip.AddrPort, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.addrs[id]
	return a, ok
}
