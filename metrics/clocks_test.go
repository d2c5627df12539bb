package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/lanleader/lanleader/metrics"
)

// Each peer's clock offset is a gauge labelled with its id, read at the
// scrape: a peer no longer measured disappears.
func TestClockOffsetGauges(t *testing.T) {
	m := metrics.New("dev")
	offsets := []metrics.ClockOffset{{Node: "n2", Offset: 5002 * time.Millisecond}, {Node: "n3", Offset: -3 * time.Millisecond}}
	m.WatchClockOffsets(func() []metrics.ClockOffset { return offsets })
	const help = `# HELP lanleader_peer_clock_offset_seconds How far the peer's wall clock is from this node's (positive: ahead), as this node last measured it as leader (followers measure nobody). Job instants follow the leader's clock; keep it within the warning bound (1 s by default).
# TYPE lanleader_peer_clock_offset_seconds gauge
`
	assert.NoError(t, testutil.GatherAndCompare(m.Registry(), strings.NewReader(help+`lanleader_peer_clock_offset_seconds{peer="n2"} 5.002
lanleader_peer_clock_offset_seconds{peer="n3"} -0.003
`), "lanleader_peer_clock_offset_seconds"))
	offsets = offsets[:1]
	assert.NoError(t, testutil.GatherAndCompare(m.Registry(), strings.NewReader(help+`lanleader_peer_clock_offset_seconds{peer="n2"} 5.002
`), "lanleader_peer_clock_offset_seconds"))
}
