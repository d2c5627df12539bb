// Package udpjobs runs a job runner under a udp Elector: Cluster is the
// udp election as the jobs.Cluster a jobs.Runner is built with. The udp
// package itself knows nothing of jobs; this is the one place they meet.
package udpjobs

import (
	"context"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/jobs"
)

// Cluster returns e as a jobs.Cluster:
//   - MayAct is e.CanActAsLeader (it leads, its quorum lease holds, it was
//     not paused);
//   - Commit is e.Commit: quorum mode waits for a majority's acks of a
//     heartbeat carrying the entry, otherwise for that heartbeat to leave;
//   - Publish heartbeats the new ledger at once (e.Publish);
//   - SetHolding is e.SetHolding: a deposed leader says its runs go on;
//   - Timing has e's gathering window, hold lapse and succession.
//
// Wire the other direction in udp.Config: Payload is the runner's Ledger
// and OnPayload its AdoptLedgerFrom, with HoldWordOf the payload.
func Cluster(e *udp.Elector) jobs.Cluster { return cluster{e} }

type cluster struct{ e *udp.Elector }

func (c cluster) MayAct() bool { return c.e.CanActAsLeader() }

func (c cluster) Commit(ctx context.Context, _ string, _ jobs.LedgerEntry) error {
	return c.e.Commit(ctx)
}

func (c cluster) Publish() { c.e.Publish() }

func (c cluster) SetHolding(holding bool) { c.e.SetHolding(holding) }

func (c cluster) Timing() jobs.ClusterTiming {
	return jobs.ClusterTiming{Gather: c.e.GatherWindow(), HoldLapse: c.e.HoldLapse(), Succession: c.e.Succession()}
}

// HoldWordOf returns what the message that carried h says of its sender's
// runs: marked holding, holding nothing (an unmarked claim, vote or
// ledger), or nothing at all (a leader's message).
func HoldWordOf(h protocol.PeerPayload) jobs.HoldWord {
	switch {
	case !h.SpeaksOfHolds():
		return jobs.SaysNoHolds
	case h.Holding:
		return jobs.HoldsMarked
	}
	return jobs.HoldsNothing
}
