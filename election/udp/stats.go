package udp

import "github.com/lanleader/lanleader/election/udp/protocol"

// stepResult names what Step did with a message, from the protocol's
// counters before and after: "ok", or the drop reason it counted.
func stepResult(before, after protocol.Stats) string {
	for reason, n := range after.Dropped {
		if n > before.Dropped[reason] {
			return string(reason)
		}
	}
	return "ok"
}
