package jobs

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a job's parsed schedule.
type Schedule interface {
	// Next returns the first instant strictly after t at which the job is
	// due, in UTC and whole seconds, or the zero time if there is none
	// within five years. It does not depend on t's location.
	Next(t time.Time) time.Time
	// Location is the zone the schedule's wall times are read in (CRON_TZ,
	// or the machine's local zone), for showing its instants to people.
	Location() *time.Location
}

// parser accepts 5 fields, an optional leading seconds field, descriptors
// and a CRON_TZ=/TZ= prefix.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour |
	cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses a cron spec as accepted in a job's schedule key:
// robfig/cron/v3 syntax, with day of week 7 meaning Sunday, @every only in
// whole seconds of at least 1s, and cronie's daylight saving rule (see
// zoneSchedule). Wall times without CRON_TZ are read in time.Local. It
// never panics, whatever the input (robfig/cron/v3 does on some inputs, such
// as a time zone prefix with nothing after it).
func ParseSchedule(spec string) (Schedule, error) {
	return parseScheduleIn(spec, time.Local)
}

// parseScheduleIn is ParseSchedule with local standing for the machine's
// zone, so tests can pick it.
func parseScheduleIn(spec string, local *time.Location) (sched Schedule, err error) {
	tz, body := splitZone(strings.TrimSpace(spec))
	if body == "" {
		if tz != "" {
			return nil, fmt.Errorf("time zone prefix without a schedule after it")
		}
		return nil, fmt.Errorf("empty schedule")
	}
	var written []string // the fields as written, for errors
	if strings.HasPrefix(body, "@") {
		if d, ok, err := parseEvery(body); ok {
			if err != nil {
				return nil, err
			}
			return every{d: d, loc: local}, nil
		}
	} else {
		written = strings.Fields(body)
		body = cronieFields(body)
	}
	elapsed := elapsedHours(body)
	noZone := body
	if tz != "" {
		body = tz + " " + body
	}
	defer func() {
		if p := recover(); p != nil {
			sched, err = nil, fmt.Errorf("unparsable schedule: %v", p)
		}
	}()
	parsed, err := parser.Parse(body)
	if err != nil {
		return nil, scheduleError(noZone, written, err)
	}
	spec6, ok := parsed.(*cron.SpecSchedule)
	if !ok { // cannot happen: @every was handled above
		return nil, fmt.Errorf("unsupported schedule type %T", parsed)
	}
	loc := spec6.Location
	if loc == time.Local {
		loc = local
	}
	wall := *spec6
	wall.Location = time.UTC
	z := &zoneSchedule{wall: &wall, loc: loc, elapsed: elapsed}
	if z.Next(time.Now()).IsZero() {
		return nil, fmt.Errorf("never fires")
	}
	return z, nil
}

// splitZone splits a CRON_TZ=/TZ= prefix (returned as written, "" if none)
// from the rest of the spec.
func splitZone(spec string) (tz, body string) {
	if !strings.HasPrefix(spec, "TZ=") && !strings.HasPrefix(spec, "CRON_TZ=") {
		return "", spec
	}
	i := strings.IndexAny(spec, " \t")
	if i < 0 {
		return spec, ""
	}
	return spec[:i], strings.TrimSpace(spec[i:])
}

// parseEvery parses "@every D"; ok is false for other descriptors. D must
// be whole seconds and at least 1s: robfig/cron rounds anything else
// silently (@every 1500ms would run every second).
func parseEvery(desc string) (d time.Duration, ok bool, err error) {
	const prefix = "@every "
	if !strings.HasPrefix(desc, prefix) {
		return 0, false, nil
	}
	arg := strings.TrimSpace(desc[len(prefix):])
	d, err = time.ParseDuration(arg)
	switch {
	case err != nil:
		return 0, true, fmt.Errorf("@every %s: not a duration (examples: 30s, 5m, 1h30m)", arg)
	case d < time.Second:
		return 0, true, fmt.Errorf("@every %s: below the 1s minimum", arg)
	case d%time.Second != 0:
		return 0, true, fmt.Errorf("@every %s: not whole seconds (use %s or %s)", arg,
			d.Truncate(time.Second), d.Truncate(time.Second)+time.Second)
	}
	return d, true, nil
}

// elapsedHours reports whether a spec (fields or descriptor, without zone
// prefix) has "*" or a step in its hour field: such schedules fire by the
// clock as it reads across a DST transition, not by cronie's fixed-time
// rule.
func elapsedHours(body string) bool {
	if strings.HasPrefix(body, "@") {
		return body == "@hourly"
	}
	f := strings.Fields(body)
	if len(f) < 5 {
		return false
	}
	return strings.ContainsAny(f[len(f)-4], "*?/")
}

// every is "@every D": the instants are the multiples of D since the Unix
// epoch (1970-01-01T00:00:00Z), whatever the zone. Anchored there rather
// than at when a leader took the schedule up, they are a function of time
// alone: every node computes the same ones, so a successor after a
// failover, a leader after a total outage and a loop rebuilt by a reload
// all continue the one sequence, and a cursor that moved (to a takeover,
// to a reload) cannot shift it.
type every struct {
	d   time.Duration // whole seconds, at least 1s (parseEvery)
	loc *time.Location
}

// Next returns the first multiple of the interval since the epoch strictly
// after t, in UTC.
func (e every) Next(t time.Time) time.Time {
	d := int64(e.d / time.Second)
	s := t.Unix() // whole seconds, rounded down (before 1970 too)
	k := s / d
	if s%d < 0 {
		k-- // round down before the epoch
	}
	return time.Unix((k+1)*d, 0).UTC()
}

// Location returns the machine's zone: an interval has none of its own.
func (e every) Location() *time.Location { return e.loc }

// NextN returns the next n instants of spec after t, in the schedule's
// zone, for check-config.
func NextN(spec string, t time.Time, n int) ([]time.Time, error) {
	s, err := ParseSchedule(spec)
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, 0, n)
	for range n {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t.In(s.Location()))
	}
	return out, nil
}

// fieldNames name the fields of a 5-field spec; a 6-field one has "second"
// first.
var fieldNames = []string{"minute", "hour", "day-of-month", "month", "day-of-week"}

// scheduleError rewords robfig's error for spec (without its zone prefix;
// written are its fields as the user wrote them) to say what is wanted and
// which field is wrong: robfig names neither.
func scheduleError(spec string, written []string, err error) error {
	if _, e := parser.Parse(spec); e == nil {
		return err // the fields are fine: the zone prefix is not
	}
	if strings.HasPrefix(spec, "@") { // robfig says "unrecognized descriptor"
		return errors.New("not a known descriptor: want @every DURATION (e.g. @every 5m), @hourly, @daily (or @midnight), @weekly, @monthly or @yearly (or @annually), alone")
	}
	fields := strings.Fields(spec)
	names := fieldNames
	if len(fields) == 6 {
		names = append([]string{"second"}, fieldNames...)
	}
	if len(fields) != len(names) || len(written) != len(fields) {
		return fmt.Errorf("%d fields: want 5 (%s) or 6 (second first), or a descriptor such as @daily or @every 5m",
			len(fields), strings.Join(fieldNames, " "))
	}
	// The wrong field is the one whose replacement by * makes the spec parse.
	for i := range fields {
		trial := slices.Clone(fields)
		trial[i] = "*"
		if _, e := parser.Parse(strings.Join(trial, " ")); e == nil {
			msg := err.Error()
			if k := strings.LastIndex(msg, ": "); k >= 0 && strings.Contains(fields[i], msg[k+2:]) {
				msg = msg[:k] // robfig appends the part it refused
			}
			if names[i] == "day-of-week" { // 7 is Sunday here (cronieFields)
				msg = strings.Replace(msg, "maximum (6)", "maximum (7, Sunday like 0)", 1)
			}
			return fmt.Errorf("%s field %q: %s", names[i], written[i], msg)
		}
	}
	return err
}
