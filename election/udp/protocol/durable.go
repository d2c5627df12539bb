package protocol

// Durable is the part of a Node's state that must survive a restart of
// every node at once (a power cut): the highest round and term this node
// used or saw. A node resumed from it claims above that round, so terms —
// fencing tokens — keep growing across a full-cluster restart instead of
// starting over at round 1. The caller persists Durable whenever it
// changes and before sending what the Node queued (a CLAIM of a new round
// must not leave before its round is on disk).
type Durable struct {
	Round   uint64
	MaxTerm uint64
}

// Durable returns the state to persist.
func (n *Node) Durable() Durable { return Durable{Round: n.round, MaxTerm: n.maxTerm} }

// resume takes up a persisted Durable (Config.Resume).
func (n *Node) resume(d Durable) {
	n.observeTerm(d.MaxTerm)
	if d.Round > n.round && d.Round <= MaxRound {
		n.round = d.Round
	}
}
