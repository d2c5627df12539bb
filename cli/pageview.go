package cli

import (
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/httpapi"
)

// udpNodes lists the peers a udp node heard for the status page, with the
// role this node can tell: the rival leader and deaf peers by name, the
// rest as followers (the page marks the known leader).
func udpNodes(e *udp.Elector) []httpapi.NodeView {
	h := e.Hearing()
	deaf := map[string]bool{}
	for _, d := range h.DeafPeers {
		deaf[d.ID] = true
	}
	clocks := clockViews(e)
	var out []httpapi.NodeView
	for _, p := range e.Peers() {
		role := "follower"
		switch {
		case p.Resigned:
			role = "resigned"
		case p.ID == h.Rival.ID:
			role = "rival leader"
		case p.Witness:
			role = "witness"
		case deaf[p.ID]:
			role = "follower (does not hear the leader)"
		}
		out = append(out, httpapi.NodeView{ID: p.ID, Addr: p.Addr, Role: role, Ago: p.Ago, Clock: clocks[p.ID]})
	}
	return out
}

// udpQuorum is quorum mode's state for the page, with the guarantee line
// (quorum or not) and whether this node is a witness.
func udpQuorum(q protocol.QuorumStatus, g guarantee) httpapi.QuorumView {
	return httpapi.QuorumView{Size: q.Size, Majority: q.Majority, Reachable: q.Reachable, Heard: q.Heard,
		Witnesses: len(q.Witnesses), Lost: q.Lost, Overfull: q.Overfull, Guarantee: g.String(), Witness: g.Witness}
}
