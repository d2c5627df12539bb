package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lanleader/lanleader/jobs"
)

// WatchJobs exports, at every scrape, the job counters /status shows, from
// the same snapshot (jobs.Runner.Snapshot): skipped instants by reason and
// runs in progress. Call it once.
func (m *Metrics) WatchJobs(snapshot func() []jobs.JobStatus) {
	m.reg.MustRegister(&jobsCollector{snapshot: snapshot})
}

var (
	jobSkippedDesc = prometheus.NewDesc(Namespace+"_job_skipped_total",
		"Scheduled instants of the job not started, by reason (overlap, refused, misfired, already_started); the counts of /status.",
		[]string{JobLabel, "reason"}, nil)
	jobRunningDesc = prometheus.NewDesc(Namespace+"_job_running",
		"Runs of the job in progress on this node.", []string{JobLabel}, nil)
)

type jobsCollector struct {
	snapshot func() []jobs.JobStatus
}

func (c *jobsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobSkippedDesc
	ch <- jobRunningDesc
}

func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, j := range c.snapshot() {
		for reason, n := range map[string]uint64{
			"overlap": j.Skipped.Overlap, "refused": j.Skipped.Refused,
			"misfired": j.Skipped.Misfired, "already_started": j.Skipped.AlreadyStarted,
		} {
			ch <- prometheus.MustNewConstMetric(jobSkippedDesc, prometheus.CounterValue, float64(n), j.Name, reason)
		}
		ch <- prometheus.MustNewConstMetric(jobRunningDesc, prometheus.GaugeValue, float64(j.Running), j.Name)
	}
}

// Transport is what an election mode's network layer counts, for
// WatchTransport; /status shows the same numbers.
type Transport struct {
	PacketsSent, PacketsReceived uint64
	// Dropped counts dropped packets by reason, at every layer.
	Dropped map[string]uint64
}

var (
	packetsSentDesc = prometheus.NewDesc(Namespace+"_packets_sent_total",
		"Election packets this node sent.", nil, nil)
	packetsDroppedDesc = prometheus.NewDesc(Namespace+"_packets_dropped_total",
		"Election packets dropped, by reason (bad_mac, unknown_peer, queue_full, stale_seq, ...); the counts of /status.",
		[]string{"reason"}, nil)
)

// WatchTransport exports, at every scrape, packets sent and dropped as
// stats reports them. Call it at most once.
func (m *Metrics) WatchTransport(stats func() Transport) {
	m.reg.MustRegister(&transportCollector{stats: stats})
}

type transportCollector struct{ stats func() Transport }

func (c *transportCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- packetsSentDesc
	ch <- packetsDroppedDesc
}

func (c *transportCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(packetsSentDesc, prometheus.CounterValue, float64(s.PacketsSent))
	for reason, n := range s.Dropped {
		ch <- prometheus.MustNewConstMetric(packetsDroppedDesc, prometheus.CounterValue, float64(n), reason)
	}
}

// ServiceLabel names the service in service metrics.
const ServiceLabel = "service_name"

// WatchServices exports, at every scrape, each leader-only service as
// /status shows it (jobs.Runner.Services): whether this node's copy runs,
// and how many of its copies exited here while it led. Call it once.
func (m *Metrics) WatchServices(snapshot func() []jobs.ServiceStatus) {
	m.reg.MustRegister(&servicesCollector{snapshot: snapshot})
}

var (
	serviceUpDesc = prometheus.NewDesc(Namespace+"_service_up",
		"1 while this node's copy of the leader-only service runs, else 0.", []string{ServiceLabel}, nil)
	serviceRestartsDesc = prometheus.NewDesc(Namespace+"_service_restarts_total",
		"Copies of the service that exited on this node while it led (each is restarted after a delay).", []string{ServiceLabel}, nil)
)

type servicesCollector struct {
	snapshot func() []jobs.ServiceStatus
}

func (c *servicesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- serviceUpDesc
	ch <- serviceRestartsDesc
}

func (c *servicesCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.snapshot() {
		up := 0.0
		if s.State == jobs.ServiceRunning {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(serviceUpDesc, prometheus.GaugeValue, up, s.Name)
		ch <- prometheus.MustNewConstMetric(serviceRestartsDesc, prometheus.CounterValue, float64(s.Restarts), s.Name)
	}
}
