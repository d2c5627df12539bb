package udptest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// A follower that stops hearing the leader while still hearing (and being
// heard by) everyone else — one-way loss from the leader, a firewall that
// drops only the leader's packets — must not lead beside it: the others
// reject its claims, so it never leads, and the live leader keeps its
// followers. The netns suite's "oneway" scenario found two leaders here
// when the claimant heard no objection.
func TestHalfDeafFollowerNeverLeads(t *testing.T) {
	for _, echo := range []bool{true, false} {
		name := map[bool]string{true: "broadcast", false: "unicast"}[echo]
		t.Run(name, func(t *testing.T) {
			for _, seed := range seeds(t, 20) {
				c := protocol.DefaultLANConfig()
				c.SelfEcho = echo
				s := New(Options{Seed: seed, Link: LAN, Base: c, Trace: true, TraceLimit: 80}, nodeIDs(5)...)
				lead, err := elect(s, 10*time.Second)
				require.NoError(t, err)
				half := s.IDs()[0]
				if half == lead {
					half = s.IDs()[1]
				}
				s.Cut(lead, half)
				s.AfterEvent = func() {
					if s.Err != nil {
						return
					}
					if s.Node(half).Status().Role == election.Leader {
						s.fail("%s, which cannot hear the live leader %s, leads", half, lead)
					}
					if st := s.Node(lead).Status(); st.Role != election.Leader {
						s.fail("the live leader %s lost leadership to %q", lead, st.Leader.ID)
					}
				}
				s.Run(15 * time.Second)
				require.NoError(t, s.Err, "seed %d\n%s", seed, s.Trace())
				st := s.Node(half).Stats()
				assert.Positive(t, st.Rejected, "seed %d: its claims were rejected", seed)
				assert.LessOrEqual(t, st.ClaimsSent, uint64(2*(15/3+3)), "seed %d: it claims O(1) times per several intervals", seed)
				s.AfterEvent = nil
				s.Heal()
				s.Run(3 * time.Second)
				assert.NoError(t, s.Converged(), "seed %d", seed)
			}
		})
	}
}
