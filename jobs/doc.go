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
// Where the rules live. The rules are a core (core.go) with no clock,
// goroutine, process or log of its own: now and the guard's answer are
// arguments of every decision, and what it decides comes out as effects
// (log lines, "the ledger changed", holding). The Runner drives it under
// its lock with timers, processes and a Cluster (runner.go, start.go:
// step, lapse; takeover.go: startLeading); Core (events.go) drives the very
// same rules by events, as the simulator does on every simulated node
// (election/udp/udptest).
//   - the instants of a schedule, a function of time alone (@every too):
//     schedule.go;
//   - where a job's schedule stands in a leadership, kept across a loop a
//     reload rebuilds (position: the last instant decided, a start owed):
//     position.go;
//   - when may a leader start a run — the start check, each start decided
//     once, started or skipped with a logged reason, or kept owed while
//     the guard refuses (stepLocked, judgeLocked): start.go; then the gate
//     (Cluster.Commit) and the guard again right before exec: run.go;
//   - when is a missed instant run after a failover — what a new
//     leadership owes for the instants up to its start, after its
//     gathering window (takeOver): takeover.go; how late is too late
//     (tooLate, misfire_grace), the one misfire decision: misfire.go;
//   - runs still going on other nodes (holds, lapseLocked): holds.go, and
//     until a previous leader's run or service copy can no longer be
//     going, by the stop bound its ledger entry carries (quietAt):
//     quiet.go;
//   - a job's identity across a reload, its name (matchJobs): update.go;
//   - what a node knows of the cluster's runs (adoptLocked, the pool,
//     the ledger it tells): status.go; a run's end in the ledger
//     (finishLocked): run.go.
//
// Time: the Runner reads time only through the time package (time.Now,
// timers), so tests run it inside testing/synctest bubbles and cross hours of
// schedule in milliseconds; the core reads none.
package jobs
