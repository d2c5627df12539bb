package cli

import (
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// udpView is the udp mode's part of /status: the counters an operator reads
// when troubleshooting (flapping shows as leader_changes and suspicions, a
// key mismatch as packets dropped with reason bad_mac).
type udpView struct {
	LeaderChanges   uint64  `json:"leader_changes"`
	Suspicions      uint64  `json:"suspicions"`
	Elections       uint64  `json:"elections"`
	ClaimsSent      uint64  `json:"claims_sent"`
	BecameLeader    uint64  `json:"became_leader"`
	SteppedDown     uint64  `json:"stepped_down"`
	Pauses          uint64  `json:"pauses"`
	MissesThreshold int     `json:"misses_threshold"`
	LossEstimate    float64 `json:"loss_estimate"`
	// Probes counts this node's probes of its silent leader's port;
	// LeaderUnreachable how many found it closed (a dead process);
	// ProbesIn other nodes' probes of this one.
	Probes            uint64            `json:"probes"`
	LeaderUnreachable uint64            `json:"leader_unreachable"`
	ProbesIn          uint64            `json:"probes_in"`
	PacketsIn         uint64            `json:"packets_in"`
	PacketsOut        uint64            `json:"packets_out"`
	SocketErrors      uint64            `json:"socket_errors"`
	Dropped           map[string]uint64 `json:"dropped"`
	Hearing           hearingView       `json:"hearing"`
	// Guarantee is the guarantee in force, as logged at start.
	Guarantee guaranteeView `json:"guarantee"`
	// Clock is the peers' clock offsets (clockview.go).
	Clock clockView `json:"clock"`
	// Quorum is set in quorum mode only.
	Quorum *quorumView `json:"quorum,omitempty"`
}

// guaranteeView is the guarantee in /status: the line the node logged at
// start and its parts.
type guaranteeView struct {
	// Quorum: a side of a partition without a majority runs nothing;
	// false: each side runs the jobs until it heals.
	Quorum bool `json:"quorum"`
	// Voters is the number of voters (witnesses included); 0 when unknown.
	Voters int `json:"voters"`
	// Source is where Voters came from: cluster_size or peers.
	Source string `json:"source,omitempty"`
	// Witness: this node is a witness: it votes, never leads.
	Witness bool   `json:"witness"`
	Line    string `json:"line"`
}

func newGuaranteeView(g guarantee) guaranteeView {
	return guaranteeView{Quorum: g.Quorum, Voters: g.Voters, Source: g.Source, Witness: g.Witness, Line: g.String()}
}

// quorumView is quorum mode's part of /status: why there is no leader
// ("lost": only reachable of cluster_size answered; "overfull": more node
// ids on the LAN than cluster_size) and the refusals behind it.
type quorumView struct {
	ClusterSize int      `json:"cluster_size"`
	Majority    int      `json:"majority"`
	Lost        bool     `json:"lost"`
	Reachable   int      `json:"reachable"`
	Overfull    bool     `json:"overfull"`
	HeardIDs    []string `json:"heard_ids"`
	// Witnesses are the ids of HeardIDs that are witnesses.
	Witnesses []string `json:"witnesses"`
	// Promise is this node's promise now (it adapts to the loss it
	// measures), in the range its config allows.
	Promise      string `json:"promise"`
	PromiseMin   string `json:"promise_min"`
	PromiseMax   string `json:"promise_max"`
	QuorumFailed uint64 `json:"claims_without_majority"`
	LeaseLost    uint64 `json:"leases_lost"`
	// LeaseRetries counts heartbeats sent early to save a lease at risk.
	LeaseRetries uint64 `json:"lease_retries"`
	VotesRefused uint64 `json:"votes_refused"`
	AcksRefused  uint64 `json:"acks_refused"`
}

func newUDPView(p protocol.Stats, q protocol.QuorumStatus, t udp.TransportStats) udpView {
	v := udpView{
		LeaderChanges:     p.LeaderChanges,
		Suspicions:        p.Suspicions,
		Elections:         p.Elections,
		ClaimsSent:        p.ClaimsSent,
		BecameLeader:      p.BecameLeader,
		SteppedDown:       p.SteppedDown,
		Pauses:            p.Pauses,
		MissesThreshold:   p.MissesThreshold,
		LossEstimate:      p.LossEstimate,
		Probes:            p.Probes,
		LeaderUnreachable: p.LeaderUnreachable,
		ProbesIn:          t.ProbesIn,
		PacketsIn:         t.PacketsIn,
		PacketsOut:        t.PacketsOut,
		SocketErrors:      t.ReadErrors + t.WriteErrors,
		Dropped:           make(map[string]uint64),
	}
	if q.Size > 0 {
		v.Quorum = &quorumView{
			ClusterSize: q.Size, Majority: q.Majority, Lost: q.Lost, Reachable: q.Reachable,
			Overfull: q.Overfull, HeardIDs: q.HeardIDs, Witnesses: q.Witnesses,
			Promise: q.Promise.String(), PromiseMin: q.MinPromise.String(), PromiseMax: q.MaxPromise.String(),
			QuorumFailed: p.QuorumFailed, LeaseLost: p.LeaseLost, LeaseRetries: p.LeaseRetries, VotesRefused: p.VotesRefused, AcksRefused: p.AcksRefused,
		}
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
