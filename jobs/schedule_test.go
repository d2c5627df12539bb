package jobs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseScheduleErrors(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"@every 0s", "@every 0s: below the 1s minimum"},
		{"@every -5s", "@every -5s: below the 1s minimum"},
		{"@every 999ms", "@every 999ms: below the 1s minimum"},
		{"@every 1500ms", "@every 1500ms: not whole seconds (use 1s or 2s)"},
		{"@every 1m0.5s", "@every 1m0.5s: not whole seconds (use 1m0s or 1m1s)"},
		{"@every soon", "@every soon: not a duration"},
		{"0 0 * * 8", `day-of-week field "8": end of range (8) above maximum (7, Sunday like 0)`},
		{"0 0 * * 6-8", `day-of-week field "6-8": end of range (8) above maximum (7, Sunday like 0)`},
		{"0 0 * * 7-9", `day-of-week field "7-9"`},
		{"0 0 * * 1,7-8", `day-of-week field "1,7-8"`},
		{"61 * * * *", `minute field "61": end of range (61) above maximum (59)`},
		{"0 0 1,1-32 * *", `day-of-month field "1,1-32": end of range (32) above maximum (31)`},
		{"*/0 * * * * *", `second field "*/0"`},
		{"0 25 * * *", `hour field "25"`},
		{"0 0 * x *", `month field "x"`},
		{"CRON_TZ=Nowhere/City 0 0 * * *", "Nowhere/City"},
		{"CRON_TZ=Nowhere/City 61 * * * *", `minute field "61"`},
		{"CRON_TZ=Europe/Berlin", "time zone prefix without a schedule"},
		{"", "empty schedule"},
		{"0 0 30 2 *", "never fires"},
		{"@evry 5s", "not a known descriptor: want @every DURATION"},
		{"@every5s", "not a known descriptor"},
		{"@daily at 3", "not a known descriptor"},
		{"CRON_TZ=UTC @dayly", "not a known descriptor"},
		{"* * * *", "4 fields: want 5 (minute hour day-of-month month day-of-week) or 6 (second first)"},
		{"CRON_TZ=UTC 0 0 0 * * * *", "7 fields: want 5"},
	}
	for _, tt := range tests {
		_, err := ParseSchedule(tt.spec)
		if assert.Error(t, err, tt.spec) {
			assert.Contains(t, err.Error(), tt.want, tt.spec)
		}
	}
}

// @every D is the multiples of D since the Unix epoch, whatever the zone
// and wherever the count starts: the same instants on every node.
func TestParseScheduleEvery(t *testing.T) {
	berlin := time.FixedZone("x", 3600)
	for _, tt := range []struct {
		spec string
		from time.Time
		want string
	}{
		{"@every 90s", time.Date(2026, 3, 29, 0, 59, 59, 500_000_000, berlin), "2026-03-29T00:00:00Z"},
		{"@every 90s", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC), "2026-03-29T00:01:30Z"},
		{"@every 90s", time.Date(2026, 3, 29, 0, 1, 29, 999_999_999, time.UTC), "2026-03-29T00:01:30Z"},
		{"@every 1h", time.Date(2026, 3, 29, 2, 17, 0, 0, time.UTC), "2026-03-29T03:00:00Z"},
		{"@every 24h", time.Date(2026, 3, 29, 23, 59, 59, 0, berlin), "2026-03-30T00:00:00Z"},
		{"@every 7s", time.Unix(7*1000+3, 0), "1970-01-01T01:56:47Z"}, // 7 × 1001 s
		{"@every 7s", time.Unix(-5, 0), "1970-01-01T00:00:00Z"},
		{"@every 7s", time.Unix(-8, 0), "1969-12-31T23:59:53Z"},
		{"CRON_TZ=Europe/Berlin @every 1s", time.Date(2026, 3, 29, 0, 59, 59, 500_000_000, berlin), "2026-03-29T00:00:00Z"},
	} {
		s, err := ParseSchedule(tt.spec)
		require.NoError(t, err)
		assert.Equal(t, tt.want, s.Next(tt.from).Format(time.RFC3339), "%s after %s", tt.spec, tt.from)
	}
}

// TestDayOfWeekSeven: 7 is Sunday, as in cronie, alone, in ranges and in
// lists; other day-of-week forms keep robfig's meaning.
func TestDayOfWeekSeven(t *testing.T) {
	tests := []struct {
		spec string
		want []time.Weekday
	}{
		{"0 0 * * 7", []time.Weekday{time.Sunday}},
		{"0 0 * * 0", []time.Weekday{time.Sunday}},
		{"0 0 * * 5-7", []time.Weekday{time.Friday, time.Saturday, time.Sunday}},
		{"0 0 * * 1-7/2", []time.Weekday{time.Monday, time.Wednesday, time.Friday, time.Sunday}},
		{"0 0 * * 1,7", []time.Weekday{time.Monday, time.Sunday}},
		{"0 0 * * 7-7", []time.Weekday{time.Sunday}},
		{"0 0 * * 0-7", []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}},
		{"0 0 0 * * 7", []time.Weekday{time.Sunday}}, // with a seconds field
		{"0 0 * * 1/2", []time.Weekday{time.Monday, time.Wednesday, time.Friday}},
		{"0 0 * * MON-FRI", []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}},
		{"CRON_TZ=UTC 0 0 * * 6,7", []time.Weekday{time.Saturday, time.Sunday}},
	}
	for _, tt := range tests {
		s, err := parseScheduleIn(tt.spec, time.UTC)
		require.NoError(t, err, tt.spec)
		got := map[time.Weekday]bool{}
		at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) // a Monday
		for range 14 {
			at = s.Next(at)
			got[at.Weekday()] = true
		}
		var days []time.Weekday
		for d := time.Sunday; d <= time.Saturday; d++ {
			if got[d] {
				days = append(days, d)
			}
		}
		assert.ElementsMatch(t, tt.want, days, tt.spec)
	}
}
