package jobs

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// parser accepts 5 fields, an optional leading seconds field, descriptors
// and a CRON_TZ=/TZ= prefix.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour |
	cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses a cron spec as accepted in a job's schedule key. It
// never panics, whatever the input (robfig/cron/v3 does on some inputs, such
// as a time zone prefix with nothing after it).
func ParseSchedule(spec string) (sched cron.Schedule, err error) {
	spec = strings.TrimSpace(spec)
	if (strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=")) &&
		!strings.ContainsAny(spec, " \t") {
		return nil, fmt.Errorf("time zone prefix without a schedule after it")
	}
	defer func() {
		if p := recover(); p != nil {
			sched, err = nil, fmt.Errorf("unparsable schedule: %v", p)
		}
	}()
	sched, err = parser.Parse(spec)
	if err != nil {
		return nil, err
	}
	if sched.Next(time.Now()).IsZero() {
		return nil, fmt.Errorf("never fires")
	}
	return sched, nil
}

// NextN returns the next n instants of spec after t, for check-config.
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
		out = append(out, t)
	}
	return out, nil
}
