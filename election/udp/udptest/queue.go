package udptest

import (
	"container/heap"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

type eventKind int

const (
	evDeliver eventKind = iota
	evTick
	evFunc
	// evWake is a resumed node's next wake step (Sim.Resume).
	evWake
)

// event is one scheduled thing. Events at the same instant run in the order
// they were scheduled (seq), which keeps runs deterministic.
type event struct {
	at   time.Time
	seq  uint64
	kind eventKind
	node string
	gen  uint64
	msg  protocol.Message
	fn   func()
}

type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

func (s *Sim) push(e *event) {
	s.evSeq++
	e.seq = s.evSeq
	heap.Push(&s.q, e)
}

func (s *Sim) pop() *event { return heap.Pop(&s.q).(*event) }
