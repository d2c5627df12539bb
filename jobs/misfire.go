package jobs

import "time"

// The misfire decision: until when an instant that could not start on
// time may still start. An instant misses its time when it fell due while
// no node could start it (a failover, the whole cluster off for a reboot,
// this node unable to act as leader for a while) or when a rerun is
// decided after a hold lapsed. Every decision that starts an instant late
// asks tooLate: the takeover's misfire run (takeOver, takeover.go), a due
// start the guard refused or that was woken late (judgeLocked, start.go),
// and the rerun of a run whose hold lapsed (lapseLocked, holds.go); after
// that it is skipped with a logged reason. misfire: skip is the takeover's
// alone.
//
// With misfire_grace set, an instant may start until it is that late.
// Without it (the default), it may start until the job's next instant
// comes, as systemd timers with Persistent=true and anacron run a job
// missed while the machine was off: a daily 02:00 backup whose nodes were
// all rebooting from 01:58 to 02:10 runs once at the first leadership after
// it, from the ledger in the state dir; a per-minute job runs at most its
// latest missed instant, since the next one overtakes it within a minute.

// startableUntil returns when instant, of a job with spec and sched,
// stops being startable; the zero time if never (no misfire_grace and no
// next instant).
func startableUntil(spec *Spec, sched Schedule, instant time.Time) time.Time {
	if spec.MisfireGrace > 0 {
		return instant.Add(spec.MisfireGrace)
	}
	return sched.Next(instant)
}

// tooLate returns how late instant is at now and whether it may no longer
// start (startableUntil has come).
func tooLate(spec *Spec, sched Schedule, instant, now time.Time) (late time.Duration, over bool) {
	until := startableUntil(spec, sched, instant)
	return now.Sub(instant), !until.IsZero() && !now.Before(until)
}

// graceAttrs are the log attributes that say which rule judged instant:
// the explicit misfire_grace, or the default, with the next instant it
// waited for.
func graceAttrs(spec *Spec, sched Schedule, instant time.Time) []any {
	if spec.MisfireGrace > 0 {
		return []any{"misfire_grace", spec.MisfireGrace}
	}
	return []any{"misfire_grace", "until the next instant", "next", sched.Next(instant)}
}
