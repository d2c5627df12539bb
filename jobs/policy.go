package jobs

import "fmt"

// Overlap is what happens when an instant comes due while a previous run of
// the same job is still going.
type Overlap int

const (
	// OverlapSkip skips the new instant (logged and counted). Default.
	OverlapSkip Overlap = iota
	// OverlapAllow starts the new run alongside the old one.
	OverlapAllow
)

// LeaderLoss is what happens to a running job when this node stops leading.
type LeaderLoss int

const (
	// LeaderLossCancel stops the run: SIGTERM to its process group, SIGKILL
	// after the kill grace. Default.
	LeaderLossCancel LeaderLoss = iota
	// LeaderLossFinish lets the current attempt run to its end (no retries
	// start after leadership is lost).
	LeaderLossFinish
)

// Misfire is what happens to instants that fell due while no node could run
// them (no leader during a failover, or this node paused).
type Misfire int

const (
	// MisfireRunOnce runs the latest missed instant once, at once, if it may
	// still start (MisfireGrace; by default until the job's next instant);
	// older missed instants are skipped.
	// Default, because the promise is "no missed runs" across a failover.
	MisfireRunOnce Misfire = iota
	// MisfireSkip skips missed instants; the job runs again at its next
	// instant.
	MisfireSkip
)

var (
	overlapNames    = []string{"skip", "allow"}
	leaderLossNames = []string{"cancel", "finish"}
	misfireNames    = []string{"run-once", "skip"}
)

func (o Overlap) valid() bool    { return o >= 0 && int(o) < len(overlapNames) }
func (l LeaderLoss) valid() bool { return l >= 0 && int(l) < len(leaderLossNames) }
func (m Misfire) valid() bool    { return m >= 0 && int(m) < len(misfireNames) }

// String returns the config spelling.
func (o Overlap) String() string { return name(overlapNames, int(o)) }

// String returns the config spelling.
func (l LeaderLoss) String() string { return name(leaderLossNames, int(l)) }

// String returns the config spelling.
func (m Misfire) String() string { return name(misfireNames, int(m)) }

// MarshalText returns the config spelling.
func (o Overlap) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// MarshalText returns the config spelling.
func (l LeaderLoss) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// MarshalText returns the config spelling.
func (m Misfire) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses "skip" or "allow".
func (o *Overlap) UnmarshalText(b []byte) error { return parse(overlapNames, b, (*int)(o)) }

// UnmarshalText parses "cancel" or "finish".
func (l *LeaderLoss) UnmarshalText(b []byte) error { return parse(leaderLossNames, b, (*int)(l)) }

// UnmarshalText parses "run-once" or "skip".
func (m *Misfire) UnmarshalText(b []byte) error { return parse(misfireNames, b, (*int)(m)) }

func name(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("policy(%d)", i)
}

func parse(names []string, b []byte, out *int) error {
	for i, n := range names {
		if string(b) == n {
			*out = i
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %v", b, names)
}
