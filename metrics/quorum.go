package metrics

import "github.com/prometheus/client_golang/prometheus"

// Quorum is what the quorum-mode metrics read (udp.Elector.Quorum and its
// Stats).
type Quorum struct {
	// Lost: the last claim found no majority, or the lease ran out, and
	// no leader has been heard since.
	Lost bool
	// Reachable is how many nodes answered (this one included).
	Reachable int
	// Overfull: more distinct node ids heard than cluster_size.
	Overfull bool
	// HeardIDs is how many distinct node ids were heard lately.
	HeardIDs int
	// ClaimsWithoutMajority and LeasesLost count those events;
	// LeaseRetries the heartbeats a leader resent to save its lease.
	ClaimsWithoutMajority, LeasesLost, LeaseRetries uint64
}

// WatchQuorum registers the quorum-mode metrics, read at every scrape:
// gauges lanleader_quorum_lost, lanleader_quorum_reachable,
// lanleader_quorum_overfull, lanleader_quorum_heard_ids and counters
// lanleader_quorum_claims_without_majority_total,
// lanleader_quorum_leases_lost_total and
// lanleader_quorum_lease_retries_total. Call it at most once, in quorum
// mode.
func (m *Metrics) WatchQuorum(read func() Quorum) {
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	gauge := func(name, help string, f func(Quorum) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: "quorum", Name: name, Help: help},
			func() float64 { return f(read()) })
	}
	counter := func(name, help string, f func(Quorum) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "quorum", Name: name, Help: help},
			func() float64 { return f(read()) })
	}
	m.reg.MustRegister(
		gauge("lost", "1 while this node's side has no majority (a claim found none, or the lease ran out) and no leader was heard since.",
			func(q Quorum) float64 { return b(q.Lost) }),
		gauge("reachable", "Nodes (this one included) that answered this node's last claim, or acked its heartbeats within the lease.",
			func(q Quorum) float64 { return float64(q.Reachable) }),
		gauge("overfull", "1 while more distinct node ids are heard than cluster_size: nobody leads until it is fixed.",
			func(q Quorum) float64 { return b(q.Overfull) }),
		gauge("heard_ids", "Distinct node ids (this one included) heard within the last 30 s.",
			func(q Quorum) float64 { return float64(q.HeardIDs) }),
		counter("claims_without_majority_total", "Claims of this node that ended without a majority of votes.",
			func(q Quorum) float64 { return float64(q.ClaimsWithoutMajority) }),
		counter("leases_lost_total", "Leaderships of this node that ended because a majority stopped acknowledging.",
			func(q Quorum) float64 { return float64(q.LeasesLost) }),
		counter("lease_retries_total", "Heartbeats this node resent as leader, between scheduled ones, because its lease would otherwise have ended first (under loss).",
			func(q Quorum) float64 { return float64(q.LeaseRetries) }),
	)
}
