package jobs

import (
	"fmt"
	"testing"
	"time"
	_ "time/tzdata" // zone data even where the system has none

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

// nextInstants returns the next n instants of spec after from, in the
// schedule's zone, as RFC 3339 strings with offsets.
func nextInstants(t *testing.T, spec string, local *time.Location, from string, n int) []string {
	t.Helper()
	s, err := parseScheduleIn(spec, local)
	require.NoError(t, err)
	at := mustTime(t, from)
	var out []string
	for range n {
		at = s.Next(at)
		require.False(t, at.IsZero(), "%s: no instant after %s", spec, out)
		require.Equal(t, time.UTC, at.Location(), "instants are UTC")
		out = append(out, at.In(s.Location()).Format(time.RFC3339))
	}
	return out
}

// TestDSTLiteral pins cronie's rule with literal instants around both 2026
// transitions of a European, a North American and two southern-hemisphere
// zones, for fixed-time and hourly schedules.
func TestDSTLiteral(t *testing.T) {
	tests := []struct {
		name, spec, zone, from string
		want                   []string
	}{
		// Europe/Berlin: 2026-03-29 02:00 CET -> 03:00 CEST; 2026-10-25 03:00 CEST -> 02:00 CET.
		{"berlin fixed spring: skipped 02:30 runs at the jump", "30 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00+01:00",
			[]string{"2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"berlin fixed fall: repeated 02:30 runs in the first pass", "30 2 * * *", "Europe/Berlin", "2026-10-24T00:00:00+02:00",
			[]string{"2026-10-24T02:30:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"berlin fixed fall from the second pass", "30 2 * * *", "Europe/Berlin", "2026-10-25T02:10:00+01:00",
			[]string{"2026-10-26T02:30:00+01:00"}},
		{"berlin fixed fall between the passes", "30 2 * * *", "Europe/Berlin", "2026-10-25T02:40:00+02:00",
			[]string{"2026-10-26T02:30:00+01:00"}},
		{"berlin hourly spring", "30 * * * *", "Europe/Berlin", "2026-03-29T00:00:00+01:00",
			[]string{"2026-03-29T00:30:00+01:00", "2026-03-29T01:30:00+01:00", "2026-03-29T03:30:00+02:00", "2026-03-29T04:30:00+02:00"}},
		{"berlin hourly fall: both passes", "30 * * * *", "Europe/Berlin", "2026-10-25T01:00:00+02:00",
			[]string{"2026-10-25T01:30:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-25T02:30:00+01:00", "2026-10-25T03:30:00+01:00"}},
		{"berlin hourly fall from between the passes", "30 * * * *", "Europe/Berlin", "2026-10-25T02:50:00+02:00",
			[]string{"2026-10-25T02:30:00+01:00", "2026-10-25T03:30:00+01:00"}},
		{"berlin @hourly fall", "@hourly", "Europe/Berlin", "2026-10-25T01:30:00+02:00",
			[]string{"2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"}},
		{"berlin hour step spring: 02:00 does not exist", "0 */2 * * *", "Europe/Berlin", "2026-03-28T23:00:00+01:00",
			[]string{"2026-03-29T00:00:00+01:00", "2026-03-29T04:00:00+02:00"}},
		{"berlin hour step fall: both passes", "0 */2 * * *", "Europe/Berlin", "2026-10-24T23:00:00+02:00",
			[]string{"2026-10-25T00:00:00+02:00", "2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T04:00:00+01:00"}},
		{"berlin hour range with step fall: both passes", "0 0-22/2 * * *", "Europe/Berlin", "2026-10-24T23:00:00+02:00",
			[]string{"2026-10-25T00:00:00+02:00", "2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T04:00:00+01:00"}},
		{"berlin several skipped walls run once", "0,15,30,45 2 * * *", "Europe/Berlin", "2026-03-29T00:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:00:00+02:00"}},
		{"berlin skipped wall and the wall after the jump are one instant", "0 2,3 * * *", "Europe/Berlin", "2026-03-29T00:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:00:00+02:00"}},
		{"berlin every minute of the repeated hour once", "* 2 25 10 *", "Europe/Berlin", "2026-10-25T02:58:30+02:00",
			[]string{"2026-10-25T02:59:00+02:00", "2027-10-25T02:00:00+02:00"}}, // 2027's change is on the 31st
		{"berlin seconds field in the gap", "*/20 30 2 * * *", "Europe/Berlin", "2026-03-29T01:59:59+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"berlin @daily unaffected", "@daily", "Europe/Berlin", "2026-03-28T12:00:00+01:00",
			[]string{"2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00"}},

		// America/New_York: 2026-03-08 02:00 EST -> 03:00 EDT; 2026-11-01 02:00 EDT -> 01:00 EST.
		{"new york fixed spring", "30 2 * * *", "America/New_York", "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"new york fixed fall", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"new york hourly spring", "15 * * * *", "America/New_York", "2026-03-08T00:30:00-05:00",
			[]string{"2026-03-08T01:15:00-05:00", "2026-03-08T03:15:00-04:00"}},
		{"new york hourly fall", "15 * * * *", "America/New_York", "2026-11-01T00:30:00-04:00",
			[]string{"2026-11-01T01:15:00-04:00", "2026-11-01T01:15:00-05:00", "2026-11-01T02:15:00-05:00"}},

		// Australia/Sydney: 2026-04-05 03:00 AEDT -> 02:00 AEST; 2026-10-04 02:00 AEST -> 03:00 AEDT.
		{"sydney fixed fall (april)", "30 2 * * *", "Australia/Sydney", "2026-04-04T12:00:00+11:00",
			[]string{"2026-04-05T02:30:00+11:00", "2026-04-06T02:30:00+10:00"}},
		{"sydney fixed spring (october)", "30 2 * * *", "Australia/Sydney", "2026-10-03T12:00:00+10:00",
			[]string{"2026-10-04T03:00:00+11:00", "2026-10-05T02:30:00+11:00"}},
		{"sydney hourly fall (april)", "45 * * * *", "Australia/Sydney", "2026-04-05T01:00:00+11:00",
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-05T02:45:00+11:00", "2026-04-05T02:45:00+10:00", "2026-04-05T03:45:00+10:00"}},
		{"sydney hourly spring (october)", "45 * * * *", "Australia/Sydney", "2026-10-04T01:00:00+10:00",
			[]string{"2026-10-04T01:45:00+10:00", "2026-10-04T03:45:00+11:00"}},

		// America/Santiago switches at midnight: 2026-04-05 00:00 -03 -> 2026-04-04 23:00 -04;
		// 2026-09-06 00:00 -04 -> 01:00 -03. The skipped or repeated hour crosses a date.
		{"santiago midnight skipped", "0 0 * * *", "America/Santiago", "2026-09-05T12:00:00-04:00",
			[]string{"2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"}},
		{"santiago 23:30 repeated", "30 23 * * *", "America/Santiago", "2026-04-04T12:00:00-03:00",
			[]string{"2026-04-04T23:30:00-03:00", "2026-04-05T23:30:00-04:00"}},
		{"santiago hourly fall", "30 * * * *", "America/Santiago", "2026-04-04T22:00:00-03:00",
			[]string{"2026-04-04T22:30:00-03:00", "2026-04-04T23:30:00-03:00", "2026-04-04T23:30:00-04:00", "2026-04-05T00:30:00-04:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := mustZone(t, tt.zone)
			got := nextInstants(t, "CRON_TZ="+tt.zone+" "+tt.spec, time.UTC, tt.from, len(tt.want))
			assert.Equal(t, tt.want, got, "CRON_TZ")
			// The machine's local zone follows the same rule.
			got = nextInstants(t, tt.spec, loc, tt.from, len(tt.want))
			assert.Equal(t, tt.want, got, "local zone")
		})
	}
}

// TestDSTOracle compares Next, around every 2026 transition of several
// zones, with a brute-force reading of the rule: every minute of a window
// is checked against the wall clock, with no zone arithmetic shared with the
// implementation.
func TestDSTOracle(t *testing.T) {
	zones := []string{"Europe/Berlin", "America/New_York", "Australia/Sydney", "America/Santiago",
		"Australia/Lord_Howe", "UTC"}
	// elapsed: "*" or a step in the hour field.
	specs := []struct {
		spec    string
		elapsed bool
	}{
		{"30 2 * * *", false}, {"0 2 * * *", false}, {"0 3 * * *", false}, {"15 1 * * *", false},
		{"0 0 * * *", false}, {"30 23 * * *", false}, {"* 2 * * *", false}, {"0,30 1-3 * * *", false},
		{"10 2 * * 0", false}, {"0 2 5 4 *", false}, {"*/20 * * * *", true}, {"30 * * * *", true},
		{"0 */2 * * *", true}, {"45 */3 * * *", true}, {"0 1/2 * * *", true}, {"5 0-22/2 * * *", true},
	}
	for _, zone := range zones {
		loc := mustZone(t, zone)
		days := transitions2026(loc)
		if zone == "UTC" {
			days = []time.Time{time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)}
		}
		require.NotEmpty(t, days, zone)
		for _, tr := range days {
			clock := readClock(loc, tr.Add(-10*time.Hour), tr.Add(10*time.Hour))
			for _, sp := range specs {
				spec := sp.spec
				want := clock.oracle(t, spec, sp.elapsed)
				s, err := parseScheduleIn(spec, loc)
				require.NoError(t, err)
				var got []string
				for at := s.Next(clock.from.Add(-time.Second)); !at.IsZero() && at.Before(clock.to); at = s.Next(at) {
					got = append(got, at.In(loc).Format(time.RFC3339))
				}
				assert.Equal(t, want, got, "%s %q around %s", zone, spec, tr)
			}
		}
	}
}

// transitions2026 finds loc's offset changes in 2026 by stepping hours,
// then minutes.
func transitions2026(loc *time.Location) []time.Time {
	offset := func(at time.Time) int { _, off := at.In(loc).Zone(); return off }
	var out []time.Time
	for at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); at.Year() == 2026; at = at.Add(time.Hour) {
		if offset(at) == offset(at.Add(time.Hour)) {
			continue
		}
		m := at
		for offset(m.Add(time.Minute)) == offset(at) {
			m = m.Add(time.Minute)
		}
		out = append(out, m.Add(time.Minute))
	}
	return out
}

// clockReadings is what a zone's clocks read at every minute of [from, to)
// (and the 3 hours before from), as wall times carried in UTC.
type clockReadings struct {
	loc      *time.Location
	from, to time.Time
	walls    []time.Time // walls[i] is read at from - 3h + i minutes
}

const clockLead = 3 * 60 // minutes read before from

func readClock(loc *time.Location, from, to time.Time) clockReadings {
	c := clockReadings{loc: loc, from: from, to: to}
	for i := from.Add(-clockLead * time.Minute); i.Before(to); i = i.Add(time.Minute) {
		l := i.In(loc)
		c.walls = append(c.walls, time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC))
	}
	return c
}

// oracle lists the minutes of [from, to) at which spec (whose seconds field
// is 0) fires, by the rule's wording: a matching wall time fires when the
// clocks first read it (or every time they read it, for an elapsed hour
// field), and a matching wall time the clocks jumped over fires right after
// the jump.
func (c clockReadings) oracle(t *testing.T, spec string, elapsed bool) []string {
	t.Helper()
	p, err := cron.ParseStandard(spec)
	require.NoError(t, err)
	wallSpec := *p.(*cron.SpecSchedule)
	wallSpec.Location = time.UTC
	matches := func(w time.Time) bool { return wallSpec.Next(w.Add(-time.Second)).Equal(w) }
	var out []string
	for k := clockLead; k < len(c.walls); k++ {
		w, prevW := c.walls[k], c.walls[k-1]
		fires := matches(w)
		if fires && !elapsed {
			for _, earlier := range c.walls[k-clockLead : k] {
				if earlier.Equal(w) {
					fires = false // read before: the second pass
				}
			}
		}
		if !elapsed && w.Sub(prevW) > time.Minute {
			for s := prevW.Add(time.Minute); s.Before(w); s = s.Add(time.Minute) {
				fires = fires || matches(s)
			}
		}
		if fires {
			at := c.from.Add(time.Duration(k-clockLead) * time.Minute)
			out = append(out, at.In(c.loc).Format(time.RFC3339))
		}
	}
	return out
}

// TestDSTYearOnceADay: over a whole year, a fixed daily schedule fires once
// on every calendar day and an hourly one once every elapsed hour, with
// strictly increasing instants, so no ledger key (the instant) repeats.
func TestDSTYearOnceADay(t *testing.T) {
	for _, zone := range []string{"Europe/Berlin", "America/New_York", "Australia/Sydney", "America/Santiago"} {
		loc := mustZone(t, zone)
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
		to := time.Date(2027, 1, 1, 0, 0, 0, 0, loc)
		for _, tc := range []struct {
			spec string
			want int
		}{{"30 2 * * *", 365}, {"0 0 * * *", 365}, {"30 23 * * *", 365}, {"30 * * * *", int(to.Sub(from) / time.Hour)}} {
			s, err := parseScheduleIn("CRON_TZ="+zone+" "+tc.spec, time.UTC)
			require.NoError(t, err)
			days := map[string]int{}
			keys := map[int64]bool{}
			n := 0
			prev := from
			for at := s.Next(from.Add(-time.Second)); at.Before(to); at = s.Next(at) {
				require.True(t, at.After(prev) || n == 0, "%s %q: %s not after %s", zone, tc.spec, at, prev)
				require.False(t, keys[at.Unix()], "%s %q: instant %s twice", zone, tc.spec, at)
				keys[at.Unix()] = true
				days[at.In(loc).Format(time.DateOnly)]++
				prev = at
				n++
			}
			assert.Equal(t, tc.want, n, "%s %q", zone, tc.spec)
			if tc.want == 365 {
				for d, c := range days {
					assert.Equal(t, 1, c, "%s %q on %s", zone, tc.spec, d)
				}
			}
		}
	}
}

// TestDSTNextIgnoresLocation: Next depends on the instant only, not on the
// location it is expressed in (ledger instants are UTC, timers local).
func TestDSTNextIgnoresLocation(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	s, err := parseScheduleIn("30 2 * * *", berlin)
	require.NoError(t, err)
	at := mustTime(t, "2026-03-28T23:00:00Z")
	for _, l := range []*time.Location{time.UTC, berlin, mustZone(t, "Asia/Tokyo"), time.FixedZone("x", -7*3600)} {
		assert.Equal(t, "2026-03-29T01:00:00Z", s.Next(at.In(l)).Format(time.RFC3339), "from %s", l)
	}
}

func ExampleNextN() {
	at, _ := time.Parse(time.RFC3339, "2026-10-24T12:00:00+02:00")
	next, _ := NextN("CRON_TZ=Europe/Berlin 30 2 * * *", at, 3)
	for _, n := range next {
		fmt.Println(n.Format(time.RFC3339))
	}
	// Output:
	// 2026-10-25T02:30:00+02:00
	// 2026-10-26T02:30:00+01:00
	// 2026-10-27T02:30:00+01:00
}
