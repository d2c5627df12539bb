package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/metrics"
)

func status(role election.Role, leader string, term uint64) election.Status {
	s := election.Status{Node: "me", Role: role, Term: term}
	if leader != "" {
		s.Leader = election.LeaderInfo{ID: leader, Term: term}
	}
	return s
}

// gauges reads is_leader, has_leader, term and leader_changes_total.
func gauges(t *testing.T, m *metrics.Metrics) [4]float64 {
	t.Helper()
	want := map[string]int{
		"lanleader_is_leader": 0, "lanleader_has_leader": 1,
		"lanleader_term": 2, "lanleader_leader_changes_total": 3,
	}
	var out [4]float64
	mfs, err := m.Registry().Gather()
	require.NoError(t, err)
	found := 0
	for _, mf := range mfs {
		i, ok := want[mf.GetName()]
		if !ok {
			continue
		}
		found++
		mt := mf.GetMetric()[0]
		if mt.GetGauge() != nil {
			out[i] = mt.GetGauge().GetValue()
		} else {
			out[i] = mt.GetCounter().GetValue()
		}
	}
	require.Equal(t, len(want), found, "election metrics missing")
	return out
}

func TestElectionMetricsFollowTransitions(t *testing.T) {
	m := metrics.New("v1.2.3")
	n := election.NewNotifier(t.Context(), m.Callbacks(), status(election.Follower, "", 0))
	type g = [4]float64 // is_leader, has_leader, term, leader_changes_total

	assert.Equal(t, g{0, 0, 0, 0}, gauges(t, m), "at start")
	steps := []struct {
		name string
		s    election.Status
		want g
	}{
		{"follower learns leader a", status(election.Follower, "a", 3), g{0, 1, 3, 1}},
		{"same leader again", status(election.Follower, "a", 3), g{0, 1, 3, 1}},
		{"leader lost", status(election.Candidate, "", 4), g{0, 0, 3, 1}},
		{"this node leads", status(election.Leader, "me", 4), g{1, 1, 4, 2}},
		{"term change while leading", status(election.Leader, "me", 5), g{1, 1, 5, 3}},
		{"deposed by b", status(election.Follower, "b", 6), g{0, 1, 6, 4}},
		{"stale lower term never lowers the gauge", status(election.Follower, "c", 2), g{0, 1, 6, 5}},
	}
	for _, st := range steps {
		n.Update(st.s)
		assert.Equal(t, st.want, gauges(t, m), st.name)
	}
	n.Stop(status(election.Follower, "", 6))
	assert.Equal(t, g{0, 0, 6, 5}, gauges(t, m), "after Stop")
}

func TestPacketsAndJobs(t *testing.T) {
	m := metrics.New("dev")
	m.PacketReceived("heartbeat", "ok")
	m.PacketReceived("heartbeat", "ok")
	m.PacketReceived("claim", "bad_mac")
	m.PacketReceived("type(99)", "malformed")
	m.JobFinished("backup", "ok", 90*time.Second)
	m.JobFinished("backup", "failed", 2*time.Second)
	m.JobFinished("digest", "ok", 300*time.Millisecond)

	err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(`
# HELP lanleader_packets_received_total Election packets received, by message type and outcome: ok, or the drop reason (bad_mac, unsigned, malformed, other_cluster, duplicate_id, stale_seq, ...).
# TYPE lanleader_packets_received_total counter
lanleader_packets_received_total{result="bad_mac",type="claim"} 1
lanleader_packets_received_total{result="malformed",type="type(99)"} 1
lanleader_packets_received_total{result="ok",type="heartbeat"} 2
# HELP lanleader_job_runs_total Finished job runs on this node, by job and result.
# TYPE lanleader_job_runs_total counter
lanleader_job_runs_total{job_name="backup",result="failed"} 1
lanleader_job_runs_total{job_name="backup",result="ok"} 1
lanleader_job_runs_total{job_name="digest",result="ok"} 1
`), "lanleader_packets_received_total", "lanleader_job_runs_total")
	assert.NoError(t, err)

	mfs, err := m.Registry().Gather()
	require.NoError(t, err)
	hist := map[string]struct {
		count uint64
		sum   float64
	}{}
	for _, mf := range mfs {
		if mf.GetName() != "lanleader_job_duration_seconds" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			h := mt.GetHistogram()
			hist[mt.GetLabel()[0].GetValue()] = struct {
				count uint64
				sum   float64
			}{h.GetSampleCount(), h.GetSampleSum()}
		}
	}
	assert.Equal(t, uint64(2), hist["backup"].count)
	assert.InDelta(t, 92.0, hist["backup"].sum, 1e-9)
	assert.Equal(t, uint64(1), hist["digest"].count)
	assert.InDelta(t, 0.3, hist["digest"].sum, 1e-9)
}

func TestBuildInfo(t *testing.T) {
	m := metrics.New("v0.4.0")
	err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(`
# HELP lanleader_build_info Always 1; the labels say which lanleader build runs.
# TYPE lanleader_build_info gauge
lanleader_build_info{goversion="`+runtime.Version()+`",version="v0.4.0"} 1
`), "lanleader_build_info")
	assert.NoError(t, err)
}

// Each Metrics has its own registry: two of them (two embedded electors,
// or tests in parallel) do not clash, and nothing lands in the global one.
func TestOwnRegistry(t *testing.T) {
	a, b := metrics.New("a"), metrics.New("b")
	a.PacketReceived("heartbeat", "ok")
	assert.Equal(t, 1, testutil.CollectAndCount(a.Registry(), "lanleader_packets_received_total"))
	assert.Equal(t, 0, testutil.CollectAndCount(b.Registry(), "lanleader_packets_received_total"))

	mfs, err := prometheus.DefaultGatherer.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		assert.False(t, strings.HasPrefix(mf.GetName(), "lanleader_"), "%s in the global registry", mf.GetName())
	}
}

func TestHandler(t *testing.T) {
	m := metrics.New("v9")
	m.JobFinished("report", "timeout", time.Minute)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	for _, want := range []string{
		`lanleader_job_runs_total{job_name="report",result="timeout"} 1`,
		`lanleader_job_duration_seconds_bucket{job_name="report",le="60"} 1`,
		`lanleader_job_duration_seconds_bucket{job_name="report",le="30"} 0`,
		"lanleader_is_leader 0",
		"go_goroutines",
	} {
		assert.Contains(t, string(body), want)
	}
}

// BenchmarkPacketReceived is the metrics' share of every received packet.
func BenchmarkPacketReceived(b *testing.B) {
	m := metrics.New("dev")
	b.ReportAllocs()
	for b.Loop() {
		m.PacketReceived("heartbeat", "ok")
	}
}

// TestQuorumCounters: each quorum counter reads its own field.
func TestQuorumCounters(t *testing.T) {
	m := metrics.New("dev")
	m.WatchQuorum(func() metrics.Quorum {
		return metrics.Quorum{ClaimsWithoutMajority: 1, LeasesLost: 2, LeaseRetries: 3}
	})
	err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(`
# HELP lanleader_quorum_claims_without_majority_total Claims of this node that ended without a majority of votes.
# TYPE lanleader_quorum_claims_without_majority_total counter
lanleader_quorum_claims_without_majority_total 1
# HELP lanleader_quorum_leases_lost_total Leaderships of this node that ended because a majority stopped acknowledging.
# TYPE lanleader_quorum_leases_lost_total counter
lanleader_quorum_leases_lost_total 2
# HELP lanleader_quorum_lease_retries_total Heartbeats this node resent as leader, between scheduled ones, because its lease would otherwise have ended first (under loss).
# TYPE lanleader_quorum_lease_retries_total counter
lanleader_quorum_lease_retries_total 3
`), "lanleader_quorum_claims_without_majority_total", "lanleader_quorum_leases_lost_total", "lanleader_quorum_lease_retries_total")
	assert.NoError(t, err)
}
