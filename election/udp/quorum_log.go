package udp

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// quorumLog remembers what was last logged about quorum mode, so each
// change is logged once.
type quorumLog struct {
	overfull bool
	heard    int
	// lostSince is when the majority was lost (zero while not); warned
	// is set once the WARN went out.
	lostSince time.Time
	warned    bool
	// differing is the last logged list of nodes whose timing differs.
	differing string
	// witness is the witness last said to be heard without quorum.
	witness string
}

// warnAt is when the "no majority" WARN is due (zero if none is): the run
// loop wakes for it, whatever the node's own schedule.
func (w *quorumLog) warnAt(promise time.Duration) time.Time {
	if w.lostSince.IsZero() || w.warned {
		return time.Time{}
	}
	return w.lostSince.Add(promise)
}

// logQuorum logs changes of quorum mode's state: a majority lost (WARN,
// with counts) for longer than a promise period — a start-up or an election
// that fails once while restarted nodes still keep their start-up promise is
// not worth a WARN — or regained after that WARN (INFO), a cluster larger
// than ClusterSize (ERROR, naming the ids heard) or consistent again
// (INFO), and nodes whose promise differs from this node's (WARN, naming
// them) or that agree again (INFO). Run loop only.
func (e *Elector) logQuorum(now time.Time) {
	e.mu.Lock()
	q := e.node.Quorum()
	witness := ""
	if q.Size == 0 {
		witness = e.node.WitnessHeard(now)
	}
	e.mu.Unlock()
	if q.Size == 0 {
		e.logWitnessWithoutQuorum(witness)
		return
	}
	w := &e.qlog
	if q.Overfull != w.overfull || (q.Overfull && q.Heard > w.heard) {
		w.overfull, w.heard = q.Overfull, q.Heard
		if q.Overfull {
			e.log.Error(fmt.Sprintf("cluster_size too small: heard %d distinct node ids, cluster_size is %d; no node acts as leader until cluster_size matches the nodes on the LAN", q.Heard, q.Size),
				slog.Int("heard_ids", q.Heard), slog.Int("cluster_size", q.Size), slog.Any("ids", q.HeardIDs))
		} else {
			e.log.Info(fmt.Sprintf("cluster_size consistent again: %d node ids heard, cluster_size %d", q.Heard, q.Size),
				slog.Int("heard_ids", q.Heard), slog.Int("cluster_size", q.Size))
		}
	}
	e.logTiming(q)
	switch {
	case q.Lost && w.lostSince.IsZero():
		w.lostSince = now
	case !q.Lost:
		w.lostSince = time.Time{}
	}
	if lost := q.Lost && now.Sub(w.lostSince) >= e.cfg.Protocol.Timings().Promise; lost != w.warned {
		w.warned = lost
		if lost {
			e.log.Warn(fmt.Sprintf("no majority: %d of %d reachable, %d needed; no leader on this side", q.Reachable, q.Size, q.Majority),
				slog.Int("reachable", q.Reachable), slog.Int("cluster_size", q.Size), slog.Int("majority", q.Majority))
		} else {
			e.log.Info(fmt.Sprintf("majority regained: a leader of %d nodes is elected", q.Size),
				slog.Int("cluster_size", q.Size), slog.Int("majority", q.Majority))
		}
	}
}

// logTiming logs when the set of nodes whose promise this node's config
// would never make changes: a WARN naming them and their promises, or an INFO once
// none differs any more. Their votes and acks are heard only by the node
// they answer, so it is the leader (or a candidate) that says it.
func (e *Elector) logTiming(q protocol.QuorumStatus) {
	w := &e.qlog
	parts := make([]string, len(q.Differing))
	for i, p := range q.Differing {
		parts[i] = fmt.Sprintf("%s promises %v", p.ID, p.Promise)
	}
	d := strings.Join(parts, ", ")
	if d == w.differing {
		return
	}
	promises := promiseRange(q)
	switch {
	case d != "":
		e.log.Warn(fmt.Sprintf("timing differs: %s; this node's interval and misses promise %s; each lease follows the shortest promise granted, so leases are shorter and leaders heartbeat faster than configured: set the same interval and misses on every node", d, promises),
			slog.Any("nodes", parts), slog.String("promise", promises))
	case w.differing != "":
		e.log.Info(fmt.Sprintf("timing agrees again: no node heard lately promises other than %s", promises), slog.String("promise", promises))
	}
	w.differing = d
}

// promiseRange says what this node's config promises: one duration, or
// the range an adaptive promise moves in ("600ms to 2s").
func promiseRange(q protocol.QuorumStatus) string {
	if q.MinPromise == q.MaxPromise {
		return q.MinPromise.String()
	}
	return fmt.Sprintf("%v to %v", q.MinPromise, q.MaxPromise)
}

// logWitnessWithoutQuorum says, once per witness, that a witness is heard
// while this node runs without quorum: the witness's votes do nothing
// here, and the setup the operator meant (two servers and a witness) is
// not in force.
func (e *Elector) logWitnessWithoutQuorum(witness string) {
	if witness == "" || witness == e.qlog.witness {
		return
	}
	e.qlog.witness = witness
	e.log.Warn(fmt.Sprintf("witness %s is heard, but this node runs without quorum, where a witness does nothing: set cluster_size (the voters, witnesses included) on every node, or list every voter in peers", witness),
		slog.String("witness", witness))
}
