package cli

import "github.com/lanleader/lanleader/election/udp/protocol"

// hearingView is /status's "hearing" object in udp mode: who hears whom.
// Each field names what docs/operations.md's troubleshooting explains.
type hearingView struct {
	// Isolated: no valid packet from any other node for 10 intervals.
	Isolated bool `json:"isolated"`
	// Deaf: this node's own broadcasts do not come back (it cannot
	// receive; broadcast mode on Linux).
	Deaf bool `json:"deaf"`
	// SilentForMs is how long ago another node was last heard.
	SilentForMs int64 `json:"silent_for_ms"`
	// RivalLeader is a leader whose heartbeats this node ignores.
	RivalLeader *rivalView `json:"rival_leader,omitempty"`
	// DeafPeers are nodes that send but show no sign of hearing.
	DeafPeers []peerView `json:"deaf_peers,omitempty"`
	// DuplicateID is another process heard with this node's id.
	DuplicateID *peerView `json:"duplicate_id,omitempty"`
	// SignedUnchecked counts signed packets accepted without a key.
	SignedUnchecked uint64 `json:"signed_unchecked,omitempty"`
}

type rivalView struct {
	ID     string `json:"id"`
	Addr   string `json:"addr"`
	Term   uint64 `json:"term"`
	Higher bool   `json:"higher_term"`
}

type peerView struct {
	ID   string `json:"id,omitempty"`
	Addr string `json:"addr"`
	// SelfReported: the peer says it hears nobody.
	SelfReported bool `json:"self_reported,omitempty"`
	// Withheld (duplicate_id, quorum mode): this process no longer votes,
	// acknowledges or leads (protocol.Duplicate.Withheld).
	Withheld bool `json:"withheld,omitempty"`
}

func newHearingView(h protocol.Hearing, unchecked uint64) hearingView {
	v := hearingView{Isolated: h.Isolated, Deaf: h.Deaf, SilentForMs: h.SilentFor.Milliseconds(),
		SignedUnchecked: unchecked}
	if r := h.Rival; r.ID != "" {
		v.RivalLeader = &rivalView{ID: r.ID, Addr: r.Addr, Term: r.Term, Higher: r.Higher}
	}
	for _, p := range h.DeafPeers {
		v.DeafPeers = append(v.DeafPeers, peerView{ID: p.ID, Addr: p.Addr, SelfReported: p.SelfReported})
	}
	if d := h.Duplicate; d.Incarnation != 0 {
		v.DuplicateID = &peerView{Addr: d.Addr, Withheld: d.Withheld}
	}
	return v
}
