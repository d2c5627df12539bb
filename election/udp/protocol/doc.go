// Package protocol is the pure core of lanleader's UDP election: a state
// machine driven only by Tick(now) and Step(now, msg) that returns the
// messages to send. It opens no sockets, starts no goroutines, never reads
// the clock and takes its randomness from its Config, so every behaviour can
// be replayed exactly in the simulator (package udptest).
//
// Where the rules live:
//   - when does a follower claim: when its leader's heartbeats stop past
//     the failure detector's deadline (followDeadline, node.go; the
//     detector adapts to measured loss, hearing.go), or at once when a
//     probe says the leader's process is gone (unreachable.go,
//     suspectSilence); it then waits its backoff and campaigns (tick.go,
//     transitions.go: suspect, backOff, campaign);
//   - who wins a claim: term.go (the order of terms), step.go (stepClaim:
//     yield to a better claim, vote), quorum.go (won: a majority's votes);
//   - when may a leader act, and so start a run: CanActAsLeader (node.go)
//     — it leads, it was not paused, and in quorum mode its lease holds
//     (quorum.go's mayAct, quorum_lease.go); a job run's gate is
//     Committed (handover.go): a majority acknowledged the heartbeat
//     carrying its ledger entry, within the lease;
//   - when a leader steps down: tick.go (tickOnce: lease lost, deaf to its
//     own heartbeats), step.go (a better leader heard), Resign;
//   - what a new leader hears of the old one's runs (the job ledger):
//     handover.go (gathering window, Payloads, holding); when a missed
//     instant runs after a failover is the job runner's rule, not the
//     election's: jobs' takeover (jobs/takeover.go, takeOver; misfire
//     grace in graceOf).
package protocol
