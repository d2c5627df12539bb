package protocol

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// Publish sets the payload like SetPayload and, while leading, heartbeats at
// once instead of at the next interval. The job runner calls it (through the
// Elector) right after it records an instant as started and before the
// process runs, so that if this leader dies now its successor already knows
// the instant was taken and does not run it again.
func (n *Node) Publish(now time.Time, p []byte) {
	n.SetPayload(p)
	if n.role == election.Leader && !n.quiet {
		n.beat(now)
	}
}
