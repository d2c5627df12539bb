package heartbeat

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestMissesFor(t *testing.T) {
	tests := []struct {
		loss float64
		want int
	}{
		{0, 3}, {0.009, 3}, {0.05, 5}, {0.2, 9}, {0.5, 10}, {1, 10},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, MissesFor(tc.loss, 3, 10, 1e-6), "loss %v", tc.loss)
	}
	assert.Equal(t, 3, MissesFor(0.5, 3, 3, 1e-6), "fixed threshold")
}

func TestDetectorAdaptsToLoss(t *testing.T) {
	d, err := NewDetector(DetectorConfig{Interval: 200 * time.Millisecond, MinMisses: 3, MaxMisses: 10, Target: 1e-6, Window: 1000})
	require.NoError(t, err)
	d.Reset(t0)
	assert.Equal(t, t0.Add(600*time.Millisecond), d.Deadline())
	r := rand.New(rand.NewPCG(1, 2))
	now := t0
	for seq := uint64(1); seq <= 5000; seq++ {
		now = now.Add(200 * time.Millisecond)
		if r.Float64() < 0.2 {
			continue
		}
		d.Observe(now, seq)
	}
	assert.InDelta(t, 0.2, d.Loss(), 0.04)
	assert.GreaterOrEqual(t, d.Misses(), 8)
	assert.Equal(t, d.Last().Add(d.Timeout()), d.Deadline())
}

func TestDetectorIgnoresOldSeqAndCapsGaps(t *testing.T) {
	d, err := NewDetector(DetectorConfig{Interval: time.Second, MinMisses: 3, MaxMisses: 10, Target: 1e-6, Window: 100})
	require.NoError(t, err)
	d.Reset(t0)
	d.Observe(t0, 10)
	d.Observe(t0, 5)
	assert.Zero(t, d.Loss())
	d.Observe(t0, 1<<60)
	assert.Less(t, d.Loss(), 0.5, "one wild gap must not look like total loss")
}

func TestDetectorConfigValidate(t *testing.T) {
	_, err := NewDetector(DetectorConfig{Interval: time.Second, MinMisses: 3, MaxMisses: 2})
	assert.ErrorContains(t, err, "MaxMisses")
	_, err = NewDetector(DetectorConfig{Interval: 0, MinMisses: 3, MaxMisses: 3})
	assert.ErrorContains(t, err, "Interval")
}

func TestBackoffWeightedByPriority(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	max := 100 * time.Millisecond
	var hi, lo time.Duration
	for range 1000 {
		h := Backoff(r, 255, max)
		l := Backoff(r, 0, max)
		require.GreaterOrEqual(t, h, time.Duration(0))
		require.Less(t, l, max)
		hi += h
		lo += l
	}
	assert.Less(t, hi, lo, "higher priority backs off less on average")
	assert.Zero(t, Backoff(r, 1, 0))
}
