package election

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSuccessionQuietAt(t *testing.T) {
	since := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		s    Succession
		want time.Time
		ok   bool
	}{
		"no coordination": {Succession{}, time.Time{}, false},
		// The stop time (11 s by the old leader's clock) counts a fifth
		// longer: clock rates may differ by 20 %.
		"quorum":        {Succession{Bounded: true}, since.Add(13200 * time.Millisecond), true},
		"etcd, 2 s TTL": {Succession{Bounded: true, Overhang: 2 * time.Second}, since.Add(15200 * time.Millisecond), true},
	} {
		got, ok := tc.s.QuietAt(since, 11*time.Second)
		assert.Equal(t, tc.ok, ok, name)
		assert.Equal(t, tc.want, got, name)
	}
}
