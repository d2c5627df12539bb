package heartbeat

import (
	"fmt"
	"math"
	"time"
)

// DetectorConfig configures a Detector.
type DetectorConfig struct {
	// Interval is the period at which the monitored sender heartbeats.
	Interval time.Duration
	// MinMisses is the number of consecutive heartbeat intervals that must
	// pass without a heartbeat before the sender is suspected on a
	// loss-free link. It is also the threshold while nothing is known.
	MinMisses int
	// MaxMisses caps the adaptive threshold, bounding failover time on very
	// lossy links. Equal to MinMisses disables adaptation (a fixed
	// threshold, as in VRRP).
	MaxMisses int
	// Target is the accepted probability that a live sender is suspected in
	// any one heartbeat slot, i.e. that Misses consecutive heartbeats are
	// all lost. The threshold is the smallest Misses in [MinMisses,
	// MaxMisses] with loss^Misses <= Target. 1e-6 at 200 ms heartbeats is
	// about 0.4 suspicions per follower per day.
	Target float64
	// Window is the number of heartbeat slots the loss estimate remembers
	// (older evidence decays). About 1000 slots is a few minutes at 200 ms.
	Window int
}

// Validate reports the first field that is out of range.
func (c DetectorConfig) Validate() error {
	switch {
	case c.Interval <= 0:
		return fmt.Errorf("heartbeat: Interval must be positive, got %v", c.Interval)
	case c.MinMisses < 1:
		return fmt.Errorf("heartbeat: MinMisses must be at least 1, got %d", c.MinMisses)
	case c.MaxMisses < c.MinMisses:
		return fmt.Errorf("heartbeat: MaxMisses (%d) must be at least MinMisses (%d)", c.MaxMisses, c.MinMisses)
	case c.MaxMisses > 1000:
		return fmt.Errorf("heartbeat: MaxMisses must be at most 1000, got %d", c.MaxMisses)
	case c.MaxMisses > c.MinMisses && !(c.Target > 0 && c.Target < 1):
		return fmt.Errorf("heartbeat: Target must be in (0,1) when MaxMisses > MinMisses, got %v", c.Target)
	case c.MaxMisses > c.MinMisses && c.Window < 10:
		return fmt.Errorf("heartbeat: Window must be at least 10 slots when MaxMisses > MinMisses, got %d", c.Window)
	}
	return nil
}

// Detector decides when one monitored sender (the leader) is suspected.
//
// It is a fixed "Misses × Interval since the last heartbeat" detector whose
// Misses adapts to the loss it observes, in the spirit of phi-accrual: the
// sender numbers its packets (Seq), so gaps in Seq count lost packets
// exactly, independent of delay jitter. With loss p, a live sender is
// suspected in a slot with probability p^Misses; the detector picks the
// smallest Misses that keeps that under Target. Loss therefore raises the
// threshold (slower failover) instead of causing flaps.
//
// The zero Detector is not usable; call NewDetector.
type Detector struct {
	cfg DetectorConfig
	// last is when the last heartbeat arrived; zero before any.
	last time.Time
	// lastSeq is the Seq of the last heartbeat; valid when haveSeq.
	lastSeq uint64
	haveSeq bool
	// expected and lost are decayed counts of slots and lost packets.
	expected, lost float64
}

// priorSlots is the weight of the initial "no loss" assumption, so a single
// early loss does not look like 50% loss.
const priorSlots = 50

// maxGap bounds the number of slots one Seq gap may account for, so a
// restarted or misbehaving sender cannot poison the estimate at once.
const maxGap = 32

// NewDetector returns a Detector for cfg, which must be valid.
func NewDetector(cfg DetectorConfig) (*Detector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Detector{cfg: cfg, expected: priorSlots}, nil
}

// Reset starts monitoring a (new) sender at now: the suspicion deadline
// becomes now + threshold, and the Seq baseline is forgotten. The loss
// estimate is kept: loss is mostly a property of this node's link.
func (d *Detector) Reset(now time.Time) {
	d.last = now
	d.haveSeq = false
}

// Observe records a heartbeat with sequence number seq arriving at now.
// Seq numbers that do not grow are ignored for the loss estimate (the
// protocol core drops them before they get here anyway).
func (d *Detector) Observe(now time.Time, seq uint64) {
	if now.After(d.last) {
		d.last = now
	}
	if !d.haveSeq {
		d.lastSeq, d.haveSeq = seq, true
		return
	}
	if seq <= d.lastSeq {
		return
	}
	gap := seq - d.lastSeq
	d.lastSeq = seq
	if gap > maxGap {
		gap = maxGap
	}
	d.expected += float64(gap)
	d.lost += float64(gap - 1)
	if w := float64(d.cfg.Window); w > 0 && d.expected > w {
		// Exponential-ish decay: keep the ratio, forget the volume.
		f := w / d.expected
		d.expected *= f
		d.lost *= f
	}
}

// Loss returns the current estimate of the fraction of heartbeats lost.
func (d *Detector) Loss() float64 {
	if d.expected <= 0 {
		return 0
	}
	return d.lost / d.expected
}

// Misses returns the current threshold in heartbeat intervals.
func (d *Detector) Misses() int {
	return MissesFor(d.Loss(), d.cfg.MinMisses, d.cfg.MaxMisses, d.cfg.Target)
}

// Timeout returns Misses() × Interval.
func (d *Detector) Timeout() time.Duration {
	return time.Duration(d.Misses()) * d.cfg.Interval
}

// Deadline returns the instant at which the sender is suspected if nothing
// more is heard: last arrival (or Reset) + Timeout().
func (d *Detector) Deadline() time.Time {
	return d.last.Add(d.Timeout())
}

// Last returns when the sender was last heard (or Reset).
func (d *Detector) Last() time.Time { return d.last }

// MissesFor returns the smallest k in [minK, maxK] with loss^k <= target;
// maxK if none is. It is the adaptive threshold's arithmetic, exported for
// documentation and tests.
func MissesFor(loss float64, minK, maxK int, target float64) int {
	if maxK <= minK || loss <= 0 || math.IsNaN(loss) {
		return minK
	}
	if loss >= 1 {
		return maxK
	}
	k := minK
	for k < maxK && math.Pow(loss, float64(k)) > target {
		k++
	}
	return k
}
