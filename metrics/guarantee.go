package metrics

import "github.com/prometheus/client_golang/prometheus"

// SetGuarantee registers the guarantee a udp node runs with (the line it
// logs at start): gauge lanleader_quorum_voters, the number of voters a
// leader needs a majority of, 0 without quorum (a partition runs jobs on
// both sides until it heals), and gauge lanleader_witness, 1 on a witness
// (it votes and never leads). Call it at most once.
func (m *Metrics) SetGuarantee(quorumVoters int, witness bool) {
	voters := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: "quorum", Name: "voters",
		Help: "Voters a leader needs a majority of; 0 without quorum: a partition runs jobs on both sides until it heals."})
	w := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "witness",
		Help: "1 if this node is a witness: it votes and acknowledges, never leads and runs nothing."})
	voters.Set(float64(quorumVoters))
	if witness {
		w.Set(1)
	}
	m.reg.MustRegister(voters, w)
}
