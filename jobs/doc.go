// Package jobs is lanleader's cron runner: it runs shell or argv jobs, or
// makes an http: job's request (one executor per kind, executor.go), on
// robfig/cron/v3 schedules, only while this node leads, keyed by each run's
// scheduled instant so a failover neither repeats nor (with misfire
// run-once) drops an instant. It owns the job Spec, the run Ledger the
// leader piggybacks on heartbeats, and the Runner bound to an Elector's
// Callbacks. The Runner also supervises leader-only services (services.go):
// long-running processes, one copy in the cluster, each leadership's copy
// recorded in the same ledger and started only once the previous one is
// known stopped or can no longer be running.
//
// Time: the Runner reads time only through the time package (time.Now,
// timers), so tests run it inside testing/synctest bubbles and cross hours of
// schedule in milliseconds.
package jobs
