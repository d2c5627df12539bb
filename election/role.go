package election

import "fmt"

// Role is this node's part in the election.
type Role int

const (
	// Follower does not lead; it may know who does.
	Follower Role = iota
	// Candidate has claimed leadership and is waiting to see whether the
	// claim stands. It must not act as leader yet.
	Candidate
	// Leader leads: it is the one node that runs jobs.
	Leader
)

// String returns "follower", "candidate" or "leader".
func (r Role) String() string {
	switch r {
	case Follower:
		return "follower"
	case Candidate:
		return "candidate"
	case Leader:
		return "leader"
	default:
		return fmt.Sprintf("role(%d)", int(r))
	}
}

// MarshalText encodes the role as its name, so JSON status output reads
// "leader" rather than 2.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses a role name as written by MarshalText.
func (r *Role) UnmarshalText(b []byte) error {
	switch string(b) {
	case "follower":
		*r = Follower
	case "candidate":
		*r = Candidate
	case "leader":
		*r = Leader
	default:
		return fmt.Errorf("election: unknown role %q", b)
	}
	return nil
}
