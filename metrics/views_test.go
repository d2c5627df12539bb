package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/jobs"
)

// TestJobAndTransportViews: the job and packet counters /metrics exports
// are read from the same snapshots /status shows, under job_name (not
// Prometheus's own job label).
func TestJobAndTransportViews(t *testing.T) {
	m := New("test")
	snap := []jobs.JobStatus{{Name: "backup", Running: 1, Skipped: jobs.Counters{Overlap: 2, Misfired: 1}}}
	m.WatchJobs(func() []jobs.JobStatus { return snap })
	m.WatchTransport(func() Transport {
		return Transport{PacketsSent: 40, PacketsReceived: 50, Dropped: map[string]uint64{"bad_mac": 3, "unknown_peer": 1}}
	})
	require.NoError(t, testutil.GatherAndCompare(m.Registry(), strings.NewReader(`
# HELP lanleader_job_running Runs of the job in progress on this node.
# TYPE lanleader_job_running gauge
lanleader_job_running{job_name="backup"} 1
# HELP lanleader_job_skipped_total Scheduled instants of the job not started, by reason (overlap, refused, misfired, already_started); the counts of /status.
# TYPE lanleader_job_skipped_total counter
lanleader_job_skipped_total{job_name="backup",reason="already_started"} 0
lanleader_job_skipped_total{job_name="backup",reason="misfired"} 1
lanleader_job_skipped_total{job_name="backup",reason="overlap"} 2
lanleader_job_skipped_total{job_name="backup",reason="refused"} 0
# HELP lanleader_packets_sent_total Election packets this node sent.
# TYPE lanleader_packets_sent_total counter
lanleader_packets_sent_total 40
# HELP lanleader_packets_dropped_total Election packets dropped, by reason (bad_mac, unknown_peer, queue_full, stale_seq, ...); the counts of /status.
# TYPE lanleader_packets_dropped_total counter
lanleader_packets_dropped_total{reason="bad_mac"} 3
lanleader_packets_dropped_total{reason="unknown_peer"} 1
`), "lanleader_job_running", "lanleader_job_skipped_total", "lanleader_packets_sent_total", "lanleader_packets_dropped_total"))

	snap[0].Running = 0 // read at every scrape
	assert.Equal(t, 0.0, gaugeValue(t, m, "lanleader_job_running"))
}

func TestJobTimestampsAndHooks(t *testing.T) {
	m := New("test")
	before := float64(time.Now().Unix())
	m.JobFinished("backup", "ok", time.Second)
	m.JobFinished("report", "failed", time.Second)
	m.JobFinished("report", "cancelled", time.Second)
	m.HookFinished("on_job_failure", "failed")
	ok := testutil.ToFloat64(m.jobLastOK.WithLabelValues("backup"))
	assert.GreaterOrEqual(t, ok, before)
	assert.GreaterOrEqual(t, testutil.ToFloat64(m.jobLastFailed.WithLabelValues("report")), before)
	assert.Equal(t, 1, testutil.CollectAndCount(m.jobLastOK), "only backup succeeded: a failed or cancelled run is no success")
	assert.Equal(t, 1, testutil.CollectAndCount(m.jobLastFailed), "a cancelled run is no failure")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.hookRuns.WithLabelValues("on_job_failure", "failed")))
}

func gaugeValue(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}

// TestServiceViews: each leader-only service's copy is up (1) only while it
// runs here, and its restarts are counted, under service_name.
func TestServiceViews(t *testing.T) {
	m := New("test")
	m.WatchServices(func() []jobs.ServiceStatus {
		return []jobs.ServiceStatus{{Name: "scheduler", State: jobs.ServiceRunning, Restarts: 2},
			{Name: "consumer", State: jobs.ServiceRestarting, Restarts: 5}, {Name: "idle", State: jobs.ServiceIdle}}
	})
	require.NoError(t, testutil.GatherAndCompare(m.Registry(), strings.NewReader(`
# HELP lanleader_service_up 1 while this node's copy of the leader-only service runs, else 0.
# TYPE lanleader_service_up gauge
lanleader_service_up{service_name="consumer"} 0
lanleader_service_up{service_name="idle"} 0
lanleader_service_up{service_name="scheduler"} 1
# HELP lanleader_service_restarts_total Copies of the service that exited on this node while it led (each is restarted after a delay).
# TYPE lanleader_service_restarts_total counter
lanleader_service_restarts_total{service_name="consumer"} 5
lanleader_service_restarts_total{service_name="idle"} 0
lanleader_service_restarts_total{service_name="scheduler"} 2
`), "lanleader_service_up", "lanleader_service_restarts_total"))
}
