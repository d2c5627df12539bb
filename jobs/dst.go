package jobs

import (
	"time"

	"github.com/robfig/cron/v3"
)

// zoneSchedule is a cron spec read in a time zone with cronie's daylight
// saving rule, which robfig/cron/v3 lacks (its SpecSchedule.Next steps wall
// hours with time.Add, so a wall time inside a spring-forward gap is never
// found, and one inside a fall-back overlap is found once per pass):
//
//   - a wall time the clocks skip (spring forward) fires once, at the instant
//     of the jump;
//   - a wall time the clocks show twice (fall back) fires once, in the first
//     pass;
//   - unless the hour field is "*" or has a step (elapsed): then the
//     schedule follows the clock as it actually reads, so a skipped wall time
//     does not fire and a repeated one fires in both passes; with "*" that is
//     exactly "by elapsed time".
//
// It is pure: the instants depend only on t, the spec and the zone data.
type zoneSchedule struct {
	// wall matches wall-clock times: the parsed spec with its Location
	// replaced by UTC, in which robfig's Next has no transitions to trip on.
	wall *cron.SpecSchedule
	// loc is the zone the wall times are read in (CRON_TZ, or the machine's
	// local zone).
	loc *time.Location
	// elapsed is set when the hour field is "*" or has a step.
	elapsed bool
}

// maxWallScan bounds the walls Next examines before giving up (returning the
// zero time, "never"): it only loops over wall times whose instants all lie
// at or before t, which a transition region ends within a few steps.
const maxWallScan = 1 << 16

// Next returns the first instant after t at which the schedule fires, in
// UTC, or the zero time if there is none within robfig's five-year horizon.
func (z *zoneSchedule) Next(t time.Time) time.Time {
	t = t.UTC()
	// Walls after t's own wall: the first one with an instant after t gives
	// the earliest such instant, because instants grow with wall time except
	// for the second pass of a fall-back overlap, whose walls lie at or
	// before t's wall when t is in it (secondPass covers those).
	var best time.Time
	w := wallOf(t, z.loc)
	for range maxWallScan {
		w = z.wall.Next(w)
		if w.IsZero() {
			break
		}
		wt := readWall(z.loc, w)
		if f := z.firstAfter(wt, t); !f.IsZero() {
			best = f
			break
		}
		if !wt.regionEnd.IsZero() && wt.regionEnd.After(w) && (wt.first.IsZero() || !z.elapsed) {
			// The rest of this gap, or of this overlap under the first-pass
			// rule (t is in the second pass), cannot fire after t either.
			w = wt.regionEnd.Add(-time.Second)
		}
	}
	if z.elapsed {
		if f := z.secondPass(t); !f.IsZero() && (best.IsZero() || f.Before(best)) {
			best = f
		}
	}
	return best
}

// Location returns the zone the schedule's wall times are read in.
func (z *zoneSchedule) Location() *time.Location { return z.loc }

// firstAfter returns the first instant of wall time wt, under the rule,
// that is after t; zero if none.
func (z *zoneSchedule) firstAfter(wt wallTime, t time.Time) time.Time {
	var cands []time.Time
	switch {
	case wt.first.IsZero(): // in a gap
		if !z.elapsed {
			cands = []time.Time{wt.jump}
		}
	case z.elapsed:
		cands = []time.Time{wt.first, wt.second}
	default:
		cands = []time.Time{wt.first}
	}
	for _, c := range cands {
		if !c.IsZero() && c.After(t) {
			return c
		}
	}
	return time.Time{}
}

// secondPass returns, for an elapsed schedule, the earliest second-pass
// instant after t of a fall-back overlap that starts within a day after t:
// the one firing the forward scan in Next cannot see, because its wall time
// is at or before t's.
func (z *zoneSchedule) secondPass(t time.Time) time.Time {
	var best time.Time
	spans := zoneSpans(z.loc, t, t.Add(26*time.Hour))
	for k := 1; k < len(spans); k++ {
		prev, cur := spans[k-1], spans[k]
		if cur.off >= prev.off || !cur.start.After(t) {
			continue
		}
		// The clocks go back at cur.start from a to b: walls [b, a) repeat.
		b := cur.start.Add(time.Duration(cur.off) * time.Second)
		a := cur.start.Add(time.Duration(prev.off) * time.Second)
		w := z.wall.Next(b.Add(-time.Second))
		if w.IsZero() || !w.Before(a) {
			continue
		}
		f := w.Add(-time.Duration(cur.off) * time.Second)
		if best.IsZero() || f.Before(best) {
			best = f
		}
	}
	return best
}

// wallOf returns the wall-clock reading of t in loc, carried in a UTC
// time.Time (the representation z.wall works in).
func wallOf(t time.Time, loc *time.Location) time.Time {
	_, off := t.In(loc).Zone()
	return t.UTC().Add(time.Duration(off) * time.Second)
}

// wallTime is when the clocks of a zone read one wall time.
type wallTime struct {
	// first is the (first) instant the clocks read it; zero in a gap.
	first time.Time
	// second is the second instant, in a fall-back overlap; zero otherwise.
	second time.Time
	// jump, in a gap, is the instant the clocks jumped over it.
	jump time.Time
	// regionEnd, in a gap or an overlap, is the first wall time after it
	// (the end of the gap, or of the repeated range); zero otherwise.
	regionEnd time.Time
}

// readWall finds the instants at which loc's clocks read w (a wall time
// carried in a UTC time.Time).
func readWall(loc *time.Location, w time.Time) wallTime {
	// Zone offsets lie within a day of UTC, so every instant reading w
	// lies within a day of w read as UTC.
	spans := zoneSpans(loc, w.Add(-26*time.Hour), w.Add(26*time.Hour))
	var r wallTime
	for k, s := range spans {
		i := w.Add(-time.Duration(s.off) * time.Second)
		if !s.contains(i) {
			continue
		}
		if r.first.IsZero() {
			r.first = i
			continue
		}
		r.second = i
		// The repeated range ends at the wall the clocks showed just
		// before they went back.
		r.regionEnd = s.start.Add(time.Duration(spans[k-1].off) * time.Second)
	}
	if !r.first.IsZero() {
		return r
	}
	for k := 1; k < len(spans); k++ {
		tr := spans[k].start
		a := tr.Add(time.Duration(spans[k-1].off) * time.Second)
		b := tr.Add(time.Duration(spans[k].off) * time.Second)
		if !w.Before(a) && w.Before(b) {
			r.jump, r.regionEnd = tr, b
			break
		}
	}
	return r
}

// span is a stretch of time with one UTC offset in some zone.
type span struct {
	start, end time.Time // zero start: since ever; zero end: for ever
	off        int       // seconds east of UTC
}

func (s span) contains(t time.Time) bool {
	return (s.start.IsZero() || !t.Before(s.start)) && (s.end.IsZero() || t.Before(s.end))
}

// zoneSpans returns loc's offsets over [from, to], in order.
func zoneSpans(loc *time.Location, from, to time.Time) []span {
	var out []span
	t := from.In(loc)
	for range 32 { // a real zone has a handful of transitions in two days
		_, off := t.Zone()
		start, end := t.ZoneBounds()
		out = append(out, span{start: start.UTC(), end: end.UTC(), off: off})
		if end.IsZero() || end.After(to) {
			break
		}
		t = end
	}
	return out
}
