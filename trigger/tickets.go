package trigger

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// Replay protection without clocks, and run requests that are safe to
// repeat. A run request carries a ticket the leader issued for that job a
// moment before (OpTicket), and the leader decides each ticket once: the
// first run request with it starts the run (or is refused), and every
// later one, a client's resend after a lost answer or a replay, gets that
// same decision and starts nothing, like an HTTP Idempotency-Key. A leader
// that restarted, or another node that leads now, never issued the ticket
// and answers Stale. Nothing compares the client's clock with the
// leader's, so a client clock that is off by any amount lets no replay
// through.

// TicketLifetime is how long an issued ticket stays usable, and a decided
// one keeps its decision, by the issuing process's own (monotonic) clock:
// ample for a client that sends its run request as soon as the ticket
// arrives and resends it while no answer comes, short enough that the
// memory of tickets stays small.
const TicketLifetime = 30 * time.Second

// maxTickets bounds the tickets remembered; issuing one more forgets the
// oldest, which only makes that ticket Stale (a client that resends a
// forgotten one says the run may have started: RunJob).
const maxTickets = 256

// tickets are the tickets a Handler issued: unused, or decided.
type tickets struct {
	mu     sync.Mutex
	issued map[uint64]issuedTicket
}

type issuedTicket struct {
	job string
	// at is when it was issued, or decided once decided.
	at      time.Time
	decided bool
	answer  Answer // the decision
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

// decide returns the decision on ticket t for job: the one made before if
// t was decided (repeat true), else decide's, made now and kept. ok is
// false, and nothing is decided, if t is not a ticket this process issued
// for job or it expired. decide runs under ts.mu, so a ticket is decided
// once however its requests interleave.
func (ts *tickets) decide(t uint64, job string, now time.Time, decide func() Answer) (a Answer, repeat, ok bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.expire(now)
	it, ok := ts.issued[t]
	switch {
	case !ok || it.job != job:
		return Answer{}, false, false
	case it.decided:
		return it.answer, true, true
	}
	it.answer, it.decided, it.at = decide(), true, now
	ts.issued[t] = it
	return it.answer, false, true
}

// expire forgets the tickets issued, or decided, TicketLifetime ago or
// earlier. Must hold ts.mu.
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
