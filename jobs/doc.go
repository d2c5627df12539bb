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
// Where the rules of scheduled instants live:
//   - the instants of a schedule, a function of time alone (@every too):
//     schedule.go;
//   - where a job's schedule stands in a leadership, kept across a loop a
//     reload rebuilds (position: the last instant decided, a start owed):
//     position.go;
//   - each start decided once, started or skipped with a logged reason, or
//     kept owed while the guard refuses (step, judgeLocked): loop.go;
//   - what a new leadership owes for the instants up to its start, after
//     its gathering window (takeOver): leader.go;
//   - runs still going on other nodes (holds, lapse): holds.go, and until
//     a previous leader's run can no longer be going: quiet.go;
//   - a job's identity across a reload, its name (matchJobs): update.go;
//   - what a node knows of the cluster's runs (AdoptLedger, the pool):
//     status.go; a run's end in the ledger (finish): run.go.
//
// Time: the Runner reads time only through the time package (time.Now,
// timers), so tests run it inside testing/synctest bubbles and cross hours of
// schedule in milliseconds.
package jobs
