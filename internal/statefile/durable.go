package statefile

import (
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Durable returns the udp election's part of st, for
// protocol.Config.Resume: round and term, the quorum grant's binding and
// the replay table.
func (st State) Durable() protocol.Durable {
	d := protocol.Durable{Round: st.Round, MaxTerm: st.MaxTerm,
		Grant: protocol.Grant{Term: st.Grant.Term, To: st.Grant.To, Promise: time.Duration(st.Grant.PromiseNS)}}
	for _, p := range st.Peers {
		d.Peers = append(d.Peers, protocol.PeerSeq{ID: p.ID, Incarnation: p.Incarnation, Seq: p.Seq})
	}
	return d
}

// SaveDurable is the udp Elector's OnDurable: it writes d into the state
// file (atomically, fsynced) and returns once it is there, or, when only
// the replay table changed, into the replay file without fsync (Update).
func (s *Store) SaveDurable(d protocol.Durable) error {
	var peers []Peer
	for _, p := range d.Peers {
		peers = append(peers, Peer{ID: p.ID, Incarnation: p.Incarnation, Seq: p.Seq})
	}
	return s.Update(func(st *State) {
		st.Round, st.MaxTerm = d.Round, d.MaxTerm
		st.Grant = Grant{Term: d.Grant.Term, To: d.Grant.To, PromiseNS: int64(d.Grant.Promise)}
		st.Peers = peers
	})
}
