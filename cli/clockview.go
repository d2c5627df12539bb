package cli

import (
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/metrics"
)

// clockView is /status's clock part (udp mode): the bound past which a
// follower's clock offset is logged at WARN, and, on a leader, each
// follower's offset as it measured it (none on a follower).
type clockView struct {
	MaxOffsetSeconds float64         `json:"max_offset_seconds"`
	Peers            []clockPeerView `json:"peers"`
}

// clockPeerView is one follower's clock offset. RoundTripSeconds is the
// round trip the offset was corrected by.
type clockPeerView struct {
	Node             string  `json:"node"`
	OffsetSeconds    float64 `json:"offset_seconds"`
	RoundTripSeconds float64 `json:"round_trip_seconds"`
	Over             bool    `json:"over"`
	AgeSeconds       float64 `json:"age_seconds"`
}

func newClockView(e *udp.Elector) clockView {
	v := clockView{MaxOffsetSeconds: e.MaxClockOffset().Seconds(), Peers: []clockPeerView{}}
	for _, o := range e.ClockOffsets() {
		v.Peers = append(v.Peers, clockPeerView{Node: o.Node, OffsetSeconds: o.Offset.Seconds(),
			RoundTripSeconds: o.RoundTrip.Seconds(), Over: o.Over, AgeSeconds: o.Age.Seconds()})
	}
	return v
}

// clockViews are the peers' clock offsets for the status page, by id.
func clockViews(e *udp.Elector) map[string]*httpapi.ClockView {
	out := map[string]*httpapi.ClockView{}
	for _, o := range e.ClockOffsets() {
		out[o.Node] = &httpapi.ClockView{Offset: o.Offset, Over: o.Over}
	}
	return out
}

// clockMetrics are the peers' clock offsets for the metrics.
func clockMetrics(e *udp.Elector) []metrics.ClockOffset {
	var out []metrics.ClockOffset
	for _, o := range e.ClockOffsets() {
		out = append(out, metrics.ClockOffset{Node: o.Node, Offset: o.Offset})
	}
	return out
}
