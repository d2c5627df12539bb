package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ClockOffset is one peer's clock offset as this node measured it (udp:
// udp.Elector.ClockOffsets).
type ClockOffset struct {
	// Node is the peer's id.
	Node string
	// Offset is its wall clock minus this node's.
	Offset time.Duration
}

var clockOffsetDesc = prometheus.NewDesc(Namespace+"_peer_clock_offset_seconds",
	"How far the peer's wall clock is from this node's (positive: ahead), as this node last measured it as leader (followers measure nobody). Job instants follow the leader's clock; keep it within the warning bound (1 s by default).",
	[]string{"peer"}, nil)

// WatchClockOffsets exports, at every scrape, the peers' clock offsets
// read returns as lanleader_peer_clock_offset_seconds{peer}. Call it at
// most once.
func (m *Metrics) WatchClockOffsets(read func() []ClockOffset) {
	m.reg.MustRegister(&clocksCollector{read: read})
}

type clocksCollector struct {
	read func() []ClockOffset
}

func (c *clocksCollector) Describe(ch chan<- *prometheus.Desc) { ch <- clockOffsetDesc }

func (c *clocksCollector) Collect(ch chan<- prometheus.Metric) {
	for _, o := range c.read() {
		ch <- prometheus.MustNewConstMetric(clockOffsetDesc, prometheus.GaugeValue, o.Offset.Seconds(), o.Node)
	}
}
