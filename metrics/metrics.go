package metrics

import (
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every lanleader metric name.
const Namespace = "lanleader"

// JobDurationBuckets are the upper bounds, in seconds, of the job duration
// histogram: jobs range from sub-second hooks to multi-hour backups.
var JobDurationBuckets = []float64{0.1, 0.5, 1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 14400}

// Metrics is the set of lanleader metrics. Its methods are safe for
// concurrent use. Create it with New.
type Metrics struct {
	reg *prometheus.Registry

	isLeader      prometheus.Gauge
	hasLeader     prometheus.Gauge
	term          prometheus.Gauge
	leaderChanges prometheus.Counter
	packets       *prometheus.CounterVec
	jobRuns       *prometheus.CounterVec
	jobDuration   *prometheus.HistogramVec
	jobLastOK     *prometheus.GaugeVec
	jobLastFailed *prometheus.GaugeVec
	hookRuns      *prometheus.CounterVec
	httpRefused   *prometheus.CounterVec

	// packetCounters caches packets' children: a node counts every packet
	// it receives, and WithLabelValues hashes and looks up its labels each
	// time.
	packetMu       sync.Mutex
	packetCounters map[[2]string]prometheus.Counter
}

// JobLabel is the label naming a job in lanleader's job metrics. It is not
// "job", which Prometheus sets to the scrape target's job name: that
// collision turned lanleader's label into exported_job.
const JobLabel = "job_name"

// New returns Metrics registered on a new registry, with
// lanleader_build_info set for version, plus the Go runtime and process
// collectors.
func New(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		isLeader: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "is_leader",
			Help: "1 while this node leads (its jobs may run), 0 otherwise.",
		}),
		hasLeader: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "has_leader",
			Help: "1 while this node knows a leader (itself or another node), 0 otherwise.",
		}),
		term: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "term",
			Help: "Highest election term (fencing token) this node has seen a leader under.",
		}),
		leaderChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "leader_changes_total",
			Help: "Times this node learned of a new leader (a different node or a new term).",
		}),
		packets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "packets_received_total",
			Help: "Election packets received, by message type and outcome: ok, or the drop reason (bad_mac, unsigned, malformed, other_cluster, duplicate_id, stale_seq, ...).",
		}, []string{"type", "result"}),
		jobRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "job_runs_total",
			Help: "Finished job runs on this node, by job and result.",
		}, []string{JobLabel, "result"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "job_duration_seconds",
			Help:    "Wall-clock duration of finished job runs, by job.",
			Buckets: JobDurationBuckets,
		}, []string{JobLabel}),
		jobLastOK: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "job_last_success_timestamp_seconds",
			Help: "Unix time at which the job's last successful run on this node ended.",
		}, []string{JobLabel}),
		jobLastFailed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "job_last_failure_timestamp_seconds",
			Help: "Unix time at which the job's last failed run (every retry used) on this node ended.",
		}, []string{JobLabel}),
		hookRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "hook_runs_total",
			Help: "Finished hook runs, by hook (on_leader, on_follower, on_stop, on_failure, on_job_failure) and result (ok, failed, timeout).",
		}, []string{"hook", "result"}),
		httpRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "http_refused_total",
			Help: "What the status endpoint refused, by reason: bad_host (a request whose Host names no address of the endpoint: DNS rebinding, or a name missing from election.http_hosts), conn_cap (a connection closed at the connection cap).",
		}, []string{"reason"}),
	}
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help: "Always 1; the labels say which lanleader build runs.",
	}, []string{"version", "goversion"})
	buildInfo.WithLabelValues(version, runtime.Version()).Set(1)

	m.reg.MustRegister(
		m.isLeader, m.hasLeader, m.term, m.leaderChanges,
		m.packets, m.jobRuns, m.jobDuration, m.jobLastOK, m.jobLastFailed, m.hookRuns, m.httpRefused, buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry returns the registry holding every lanleader metric, for
// serving or for registering an embedding program's own metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// PacketReceived counts one received election packet. typ is the message
// type's name (protocol.Type.String(), or "unknown"), result what became of
// it: "ok" if accepted, else why it was dropped (wire.Reason and
// protocol.DropReason values: "bad_mac", "unsigned", "malformed",
// "other_cluster", "stale_seq", ...). Both come from small fixed sets;
// never pass data from the packet itself. It has the signature of
// udp.Config.OnPacket, so m.PacketReceived can be passed as is.
func (m *Metrics) PacketReceived(typ, result string) {
	key := [2]string{typ, result}
	m.packetMu.Lock()
	c, ok := m.packetCounters[key]
	if !ok {
		if m.packetCounters == nil {
			m.packetCounters = make(map[[2]string]prometheus.Counter)
		}
		c = m.packets.WithLabelValues(typ, result)
		m.packetCounters[key] = c
	}
	m.packetMu.Unlock()
	c.Inc()
}

// JobFinished records one finished run of job: its result as the job
// runner names it (e.g. "ok", "failed", "timeout", "cancelled") and how
// long it ran.
func (m *Metrics) JobFinished(job, result string, d time.Duration) {
	m.jobRuns.WithLabelValues(job, result).Inc()
	m.jobDuration.WithLabelValues(job).Observe(d.Seconds())
	switch result {
	case "ok":
		m.jobLastOK.WithLabelValues(job).SetToCurrentTime()
	case "failed":
		m.jobLastFailed.WithLabelValues(job).SetToCurrentTime()
	}
}

// HookFinished counts one finished hook run; result is "ok", "failed" or
// "timeout".
func (m *Metrics) HookFinished(hook, result string) {
	m.hookRuns.WithLabelValues(hook, result).Inc()
}

// HTTPRefused counts one request or connection the status endpoint
// refused; reason is "bad_host" or "conn_cap".
func (m *Metrics) HTTPRefused(reason string) {
	m.httpRefused.WithLabelValues(reason).Inc()
}
