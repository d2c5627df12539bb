package trigger

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// Replay protection without clocks. A run request carries a ticket the
// leader issued for that job a moment before (OpTicket), and the leader
// accepts each ticket once: a replayed run request names a ticket already
// used, and a leader that restarted, or another node that leads now, never
// issued it. Nothing compares the client's clock with the leader's, so a
// client clock that is off by any amount lets no replay through.

// TicketLifetime is how long an issued ticket stays usable by the issuing
// process's own (monotonic) clock: ample for a client that sends its run
// request as soon as the ticket arrives, short enough that the memory of
// unused tickets stays small.
const TicketLifetime = 30 * time.Second

// maxTickets bounds the unused tickets remembered; issuing one more forgets
// the oldest, which only makes that ticket unusable.
const maxTickets = 256

// tickets are the unused tickets a Handler issued.
type tickets struct {
	mu     sync.Mutex
	issued map[uint64]issuedTicket
}

type issuedTicket struct {
	job string
	at  time.Time
}

// issue returns a new ticket for job at now.
func (ts *tickets) issue(job string, now time.Time) uint64 {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.issued == nil {
		ts.issued = map[uint64]issuedTicket{}
	}
	ts.expire(now)
	if len(ts.issued) >= maxTickets {
		var oldest uint64
		for t, it := range ts.issued {
			if oldest == 0 || it.at.Before(ts.issued[oldest].at) {
				oldest = t
			}
		}
		delete(ts.issued, oldest)
	}
	t := randomTicket()
	for ts.issued[t].at != (time.Time{}) {
		t = randomTicket()
	}
	ts.issued[t] = issuedTicket{job: job, at: now}
	return t
}

// use reports whether t is an unused, unexpired ticket issued for job, and
// uses it up.
func (ts *tickets) use(t uint64, job string, now time.Time) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.expire(now)
	it, ok := ts.issued[t]
	if !ok || it.job != job {
		return false
	}
	delete(ts.issued, t)
	return true
}

// expire forgets the tickets older than TicketLifetime. Must hold ts.mu.
func (ts *tickets) expire(now time.Time) {
	for t, it := range ts.issued {
		if now.Sub(it.at) >= TicketLifetime {
			delete(ts.issued, t)
		}
	}
}

// randomTicket returns a random non-zero ticket: unguessable, so only a
// client that received it (over the cluster's keyed packets) can use it.
func randomTicket() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		if t := binary.BigEndian.Uint64(b[:]); t != 0 {
			return t
		}
	}
}
