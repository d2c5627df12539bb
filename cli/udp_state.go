package cli

import (
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/internal/statefile"
)

// udpResume is the udp election's part of the state file, for
// protocol.Config.Resume: round and term, the quorum grant's binding and
// the replay table.
func udpResume(st statefile.State) protocol.Durable {
	d := protocol.Durable{Round: st.Round, MaxTerm: st.MaxTerm, Grant: protocol.Grant{Term: st.Grant.Term, To: st.Grant.To}}
	for _, p := range st.Peers {
		d.Peers = append(d.Peers, protocol.PeerSeq{ID: p.ID, Incarnation: p.Incarnation, Seq: p.Seq})
	}
	return d
}

// udpSaver returns the udp Elector's OnDurable: it writes d into the state
// file (atomically, fsynced) and returns once it is there, or, when only
// the replay table changed, into the replay file without fsync
// (statefile.Store.Update).
func udpSaver(store *statefile.Store) func(protocol.Durable) error {
	return func(d protocol.Durable) error {
		var peers []statefile.Peer
		for _, p := range d.Peers {
			peers = append(peers, statefile.Peer{ID: p.ID, Incarnation: p.Incarnation, Seq: p.Seq})
		}
		return store.Update(func(st *statefile.State) {
			st.Round, st.MaxTerm = d.Round, d.MaxTerm
			st.Grant = statefile.Grant{Term: d.Grant.Term, To: d.Grant.To}
			st.Peers = peers
		})
	}
}
