package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// The "stopped leading" reason names what ended the leadership, not
// whatever happened during it: after a healed partition the old leader of
// the minority gives way to the better leader, and a pause it noticed and
// survived earlier is not the reason (it used to be:
// reason="resumed from a pause…" for a node that never stopped leading
// because of one).
func TestStepDownWhyNamesTheCauseThatEndedTheLeadership(t *testing.T) {
	q3 := protocol.QuorumStatus{Size: 3, Majority: 2, Reachable: 1}
	tests := []struct {
		name string
		st   protocol.Stats
		q    protocol.QuorumStatus
		want string
	}{
		{"healed partition after a survived pause", protocol.Stats{Pauses: 1, SteppedDown: 1}, protocol.QuorumStatus{},
			"a better leader or claim was heard"},
		{"the pause ended it", protocol.Stats{Pauses: 1, PausedStepDown: 1, SteppedDown: 1}, protocol.QuorumStatus{},
			"resumed from a pause as long as the followers wait before suspecting it: leadership unknown until the cluster is heard again"},
		{"lease lost after a survived pause", protocol.Stats{Pauses: 1, LeaseLost: 1, SteppedDown: 1}, q3,
			"quorum lost: 1 of 3 nodes reachable, 2 needed"},
		{"lease lost to an overfull cluster", protocol.Stats{LeaseLost: 1, SteppedDown: 1}, protocol.QuorumStatus{Size: 3, Overfull: true},
			"quorum lost: more node ids heard than cluster_size 3"},
		{"deaf", protocol.Stats{DeafStepDown: 1, SteppedDown: 1}, protocol.QuorumStatus{},
			"this node's own heartbeats stopped coming back: it cannot receive"},
		{"duplicate id", protocol.Stats{DuplicateStepDown: 1, SteppedDown: 1}, protocol.QuorumStatus{},
			"another process with this node id started first"},
		{"rejected", protocol.Stats{Rejected: 1, SteppedDown: 1}, protocol.QuorumStatus{},
			"the other nodes' followers reject it: it does not hear their leader"},
		{"quorum lost now, but the leadership ended otherwise", protocol.Stats{SteppedDown: 1}, protocol.QuorumStatus{Size: 3, Lost: true},
			"a better leader or claim was heard"},
		{"nothing counted", protocol.Stats{Pauses: 3}, protocol.QuorumStatus{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, stepDownWhy(protocol.Stats{}, tt.st, tt.q))
		})
	}
	assert.Equal(t, "", stepDownWhy(protocol.Stats{Pauses: 1, SteppedDown: 1}, protocol.Stats{Pauses: 1, SteppedDown: 1}, protocol.QuorumStatus{}),
		"counted before the leadership started")
}
