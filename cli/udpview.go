package cli

import (
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// udpView is the udp mode's part of /status: the counters an operator reads
// when troubleshooting (flapping shows as leader_changes and suspicions, a
// key mismatch as packets dropped with reason bad_mac).
type udpView struct {
	LeaderChanges   uint64            `json:"leader_changes"`
	Suspicions      uint64            `json:"suspicions"`
	Elections       uint64            `json:"elections"`
	ClaimsSent      uint64            `json:"claims_sent"`
	BecameLeader    uint64            `json:"became_leader"`
	SteppedDown     uint64            `json:"stepped_down"`
	Pauses          uint64            `json:"pauses"`
	MissesThreshold int               `json:"misses_threshold"`
	LossEstimate    float64           `json:"loss_estimate"`
	PacketsIn       uint64            `json:"packets_in"`
	PacketsOut      uint64            `json:"packets_out"`
	SocketErrors    uint64            `json:"socket_errors"`
	Dropped         map[string]uint64 `json:"dropped"`
	Hearing         hearingView       `json:"hearing"`
}

func newUDPView(p protocol.Stats, t udp.TransportStats) udpView {
	v := udpView{
		LeaderChanges:   p.LeaderChanges,
		Suspicions:      p.Suspicions,
		Elections:       p.Elections,
		ClaimsSent:      p.ClaimsSent,
		BecameLeader:    p.BecameLeader,
		SteppedDown:     p.SteppedDown,
		Pauses:          p.Pauses,
		MissesThreshold: p.MissesThreshold,
		LossEstimate:    p.LossEstimate,
		PacketsIn:       t.PacketsIn,
		PacketsOut:      t.PacketsOut,
		SocketErrors:    t.ReadErrors + t.WriteErrors,
		Dropped:         make(map[string]uint64),
	}
	for reason, n := range p.Dropped {
		v.Dropped[string(reason)] += n
	}
	if t.DroppedUnknownPeer > 0 {
		v.Dropped["unknown_peer"] = t.DroppedUnknownPeer
	}
	if t.DroppedQueueFull > 0 {
		v.Dropped["queue_full"] = t.DroppedQueueFull
	}
	return v
}
