package jobs

import "time"

// The misfire decision: an instant that could not start on time (missed
// in a failover, refused by the guard until later, a rerun decided after
// a hold lapsed) starts late only while it is less than misfire_grace
// late; after that it is skipped with a logged reason. Every decision
// that starts an instant late asks tooLate: the takeover's misfire run
// (takeOver, leader.go), a due start the guard refused or that was woken
// late (judgeLocked, loop.go), and the rerun of a run whose hold lapsed
// (lapseLocked, holds.go). misfire: skip is the takeover's alone.

// graceOf is spec's misfire_grace: how late an instant may still start.
func graceOf(spec *Spec) time.Duration {
	if spec.MisfireGrace > 0 {
		return spec.MisfireGrace
	}
	return DefaultMisfireGrace
}

// tooLate returns how late instant is at now and whether that is too late
// to start it (misfire_grace or more).
func tooLate(spec *Spec, instant, now time.Time) (late time.Duration, over bool) {
	late = now.Sub(instant)
	return late, late >= graceOf(spec)
}
