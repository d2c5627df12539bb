package metrics

import "github.com/prometheus/client_golang/prometheus"

// Hearing is what the hearing gauges read: who hears whom, as the udp
// elector sees it (udp.Elector.Hearing).
type Hearing struct {
	// Isolated: no valid packet from any other node for 10 intervals.
	Isolated bool
	// Deaf: this node's own broadcasts do not come back.
	Deaf bool
	// RivalLeader: a leader whose heartbeats this node ignores is heard.
	RivalLeader bool
	// DeafPeers counts nodes that send but show no sign of hearing.
	DeafPeers int
	// DuplicateID: another process with this node's id is heard.
	DuplicateID bool
	// SignedUnchecked counts signed packets accepted without a key.
	SignedUnchecked uint64
}

// WatchHearing registers gauges that call read at every scrape:
// lanleader_isolated, lanleader_deaf, lanleader_rival_leader,
// lanleader_deaf_peers, lanleader_duplicate_id and the counter
// lanleader_signed_unchecked_total. Call it at most once.
func (m *Metrics) WatchHearing(read func() Hearing) {
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	gauge := func(name, help string, f func(Hearing) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help},
			func() float64 { return f(read()) })
	}
	m.reg.MustRegister(
		gauge("isolated", "1 while this node has heard no valid packet from any other node for 10 intervals.",
			func(h Hearing) float64 { return b(h.Isolated) }),
		gauge("deaf", "1 while this node's own broadcasts do not come back: it cannot receive (broadcast mode, Linux).",
			func(h Hearing) float64 { return b(h.Deaf) }),
		gauge("rival_leader", "1 while a leader whose heartbeats this node ignores keeps heartbeating (lower term, or no sign of hearing the known leader).",
			func(h Hearing) float64 { return b(h.RivalLeader) }),
		gauge("deaf_peers", "Nodes that keep sending but show no sign of hearing the leader this node knows.",
			func(h Hearing) float64 { return float64(h.DeafPeers) }),
		gauge("duplicate_id", "1 while another process with this node's id is heard.",
			func(h Hearing) float64 { return b(h.DuplicateID) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: "signed_unchecked_total",
			Help: "Signed packets this node, which has no key, accepted without checking: its peers use a key."},
			func() float64 { return float64(read().SignedUnchecked) }),
	)
}
