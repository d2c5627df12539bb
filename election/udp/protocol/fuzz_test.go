package protocol

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

// FuzzStep feeds arbitrary messages (and tick times) to a node that leads,
// checking that nothing panics and the basic state invariants hold.
//
//	go test -run '^$' -fuzz FuzzStep -fuzztime 30s ./election/udp/protocol/
func FuzzStep(f *testing.F) {
	f.Add(uint8(1), "test", "p", uint64(1), uint64(1), uint64(1<<24), uint8(100), uint8(0), "p", "", []byte("x"), int64(10))
	f.Add(uint8(2), "test", "q", uint64(9), uint64(3), uint64(5<<24), uint8(255), uint8(1), "", "me", []byte{}, int64(300))
	f.Add(uint8(3), "test", "p", uint64(1), uint64(2), ^uint64(0), uint8(0), uint8(255), "p", "me", []byte(nil), int64(1))
	f.Fuzz(func(t *testing.T, typ uint8, cluster, from string, inc, seq, term uint64, prio, flags uint8, leader, succ string, payload []byte, dtMs int64) {
		n, now := alone(t, "me", 100, 1)
		st0 := n.Status()
		for i := range 3 {
			m := Message{Type: Type(typ), Cluster: cluster, From: from, Incarnation: inc, Seq: seq + uint64(i),
				Term: term, Priority: prio, Flags: flags, Leader: leader, Successor: succ, Payload: payload}
			now = now.Add(time.Duration(dtMs%5000) * time.Millisecond)
			n.Step(now, m)
			n.Tick(now)
			n.Ready()
			st := n.Status()
			if st.Term < st0.Term {
				t.Fatalf("term went back: %x -> %x", st0.Term, st.Term)
			}
			if st.Role == election.Leader && st.Leader.ID != "me" {
				t.Fatalf("leader names %q", st.Leader.ID)
			}
			if n.NextTick().IsZero() {
				t.Fatal("zero NextTick")
			}
			st0 = st
		}
	})
}
