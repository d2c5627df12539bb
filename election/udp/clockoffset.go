package udp

import (
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Clock offsets: how far each follower's wall clock is from its leader's.
// The election needs no synchronized clocks (its timeouts are monotonic),
// but the job schedule does: instants are wall-clock times computed on the
// leader, so a successor whose clock is off moves them by the offset. So a
// follower stamps its wall clock on the reports it sends its leader
// (protocol.Message.Sent; one per five heartbeats, at once in reply to the
// heartbeat it answers), and the leader measures each follower from them:
// the follower's clock when it answered, corrected by half the round trip
// from the heartbeat to the report, as NTP does. A heartbeat has no slot
// left for the leader's clock (its beat numbers it, its nonce slot holds
// the fence), so followers measure nobody: the leader's line says which
// clock is off. With the leader's own clock off, every follower is off by
// the same amount the other way: when at least two followers are measured
// and all are off beyond the bound on the same side, the leader says its
// own clock is the likely one.
//
// A message that waited in a queue makes a sample that is off by its wait.
// The messages a paused process (or a suspended host) reads from its
// socket buffer as it wakes waited up to the whole pause: no sample is
// taken within afterPause intervals of a pause the protocol noticed
// (protocol.Node.PausedAt). For shorter waits, as NTP's clock filter does,
// a follower's offset is its sample with the shortest round trip among the
// last clockSamples. A WARN names a follower whose offset passes the
// bound, at its first measurement and again whenever it passes it after
// coming back within three quarters of it (INFO then).

// DefaultMaxClockOffset is Config.MaxClockOffset when left zero.
const DefaultMaxClockOffset = time.Second

// clockSamples is how many recent samples a peer's offset is chosen from.
const clockSamples = 8

// afterPause is how many intervals after a noticed pause no sample is
// taken: the queued messages are read by then.
const afterPause = 2

// beatMemory is how many of its own recent heartbeats a leader remembers
// the send time of, to pair with the reports that answer them.
const beatMemory = 32

// ClockOffset is a follower's clock offset as its leader measured it.
type ClockOffset struct {
	// Node is the follower's id.
	Node string
	// Offset is the follower's wall clock minus this node's: positive when
	// the follower's is ahead.
	Offset time.Duration
	// RoundTrip is the round trip the offset was corrected by.
	RoundTrip time.Duration
	// Age is how long ago that sample was taken.
	Age time.Duration
	// Over: Offset is beyond the bound (Config.MaxClockOffset).
	Over bool
}

type clockSample struct {
	offset time.Duration
	rtt    time.Duration // the round trip it was corrected by
	at     time.Time     // protocol clock
}

type peerClock struct {
	samples [clockSamples]clockSample
	n, next int
	over    bool // warned, not back within 3/4 of the bound yet
}

// best is the least delayed sample held: the shortest round trip.
func (p *peerClock) best() clockSample {
	b := p.samples[0]
	for _, s := range p.samples[1:p.n] {
		if s.rtt < b.rtt {
			b = s
		}
	}
	return b
}

func (p *peerClock) add(s clockSample) {
	p.samples[p.next] = s
	p.next = (p.next + 1) % clockSamples
	p.n = min(p.n+1, clockSamples)
}

// clockWatch measures the followers' clock offsets. Its methods are
// called from the run loop (stamp, heard) and from status readers
// (offsets).
type clockWatch struct {
	mu       sync.Mutex
	bound    time.Duration
	self     string
	interval time.Duration
	// recent is how old a follower's best sample may be and still count
	// (offsets, the self verdict): ForgetPeerAfter.
	recent time.Duration
	beats  [beatMemory]sentBeat
	peers  map[string]*peerClock
	// selfOver: this node said its own clock is the likely one off, and
	// has not seen the followers agree with it again since.
	selfOver bool
}

// sentBeat is one of this node's heartbeats: its term, number and when it
// was sent (protocol clock).
type sentBeat struct {
	term, beat uint64
	at         time.Time
}

func newClockWatch(self string, interval, bound, recent time.Duration) *clockWatch {
	if bound <= 0 {
		bound = DefaultMaxClockOffset
	}
	return &clockWatch{self: self, interval: interval, bound: bound, recent: recent, peers: make(map[string]*peerClock)}
}

// carriesSent mirrors the wire codec's rule: a node's report Query (not a
// client's) carries the sender's wall clock.
func carriesSent(m *protocol.Message) bool {
	return m.Type == protocol.Query && m.Flags&protocol.FlagReport != 0 && m.Flags&protocol.FlagClient == 0
}

// stamp sets m.Sent to wall if m carries it, and remembers when a
// heartbeat left (now, protocol clock) for the reports that answer it.
func (w *clockWatch) stamp(m *protocol.Message, now, wall time.Time) {
	switch {
	case carriesSent(m):
		m.Sent = wall.UnixNano()
	case m.Type == protocol.Heartbeat:
		w.mu.Lock()
		w.beats[m.Beat%beatMemory] = sentBeat{term: m.Term, beat: m.Beat, at: now}
		w.mu.Unlock()
	}
}

// heard takes a sample from m, a message the protocol accepted, received
// at now (protocol clock) and wall, if it is a report that answers one of
// this node's heartbeats, unless the node was paused (pausedAt) within
// afterPause intervals; it logs a follower whose offset crossed the bound,
// and this node's own clock when every follower is off the same way.
func (w *clockWatch) heard(log *slog.Logger, m *protocol.Message, now, wall, pausedAt time.Time) {
	if m.Sent <= 0 || !carriesSent(m) || m.From == w.self {
		return
	}
	if !pausedAt.IsZero() && now.Sub(pausedAt) < afterPause*w.interval {
		return
	}
	w.mu.Lock()
	b := w.beats[m.Heard.Beat%beatMemory]
	if b.beat != m.Heard.Beat || b.term != m.Heard.Term || b.at.IsZero() || now.Before(b.at) {
		w.mu.Unlock()
		return
	}
	rtt := max(now.Sub(b.at), time.Nanosecond)
	p := w.peers[m.From]
	if p == nil {
		if len(w.peers) >= maxAddrs {
			clear(w.peers)
		}
		p = &peerClock{}
		w.peers[m.From] = p
	}
	p.add(clockSample{offset: time.Duration(m.Sent-wall.UnixNano()) + rtt/2, rtt: rtt, at: now})
	best := p.best()
	var crossed, cleared bool
	switch off := best.offset.Abs(); {
	case !p.over && off > w.bound:
		p.over, crossed = true, true
	case p.over && off < w.bound*3/4:
		p.over, cleared = false, true
	}
	selfOff, selfCrossed, n := w.selfVerdictLocked(now)
	w.mu.Unlock()
	if crossed || cleared {
		attrs := []any{"peer", m.From, "offset", best.offset.Round(time.Millisecond).String(), "bound", w.bound.String(),
			"measured", "from its reports, corrected by half the round trip", "round_trip", best.rtt.String()}
		if cleared {
			log.Info("clock offset back within the bound", attrs...)
		} else {
			log.Warn("clock offset over the bound: another node's wall clock differs from this node's", append(attrs,
				"cause", "the nodes' clocks are not synchronized: run NTP (chrony, systemd-timesyncd) on every node; "+
					"instants are computed on the leader's clock, so a failover moves them by the offset")...)
		}
	}
	if selfCrossed {
		log.Warn("clock offset over the bound: this node's wall clock differs from every follower's, the same way",
			"offset", selfOff.Round(time.Millisecond).String(), "followers", n, "bound", w.bound.String(),
			"cause", "this node's clock is likely the one off: run NTP (chrony, systemd-timesyncd) on every node; "+
				"instants are computed on the leader's clock, so the jobs run off by the offset")
	}
}

// selfVerdictLocked says whether this node's own clock is the likely one
// off: at least two followers measured within recent, every one beyond the
// bound on the same side. It returns this node's offset from them (the
// median of theirs, negated), whether the verdict just became true, and
// how many followers it rests on. Must hold w.mu.
func (w *clockWatch) selfVerdictLocked(now time.Time) (off time.Duration, crossed bool, n int) {
	var offs []time.Duration
	for _, p := range w.peers {
		if b := p.best(); p.n > 0 && now.Sub(b.at) <= w.recent {
			offs = append(offs, b.offset)
		}
	}
	slices.Sort(offs)
	all := len(offs) >= 2 && (offs[len(offs)-1] < -w.bound || offs[0] > w.bound)
	crossed = all && !w.selfOver
	w.selfOver = all
	if !all {
		return 0, false, len(offs)
	}
	return -offs[len(offs)/2], crossed, len(offs)
}

// offsets returns the followers' offsets measured within recent of now,
// sorted by node id.
func (w *clockWatch) offsets(now time.Time) []ClockOffset {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []ClockOffset
	for id, p := range w.peers {
		if p.n == 0 {
			continue
		}
		b := p.best()
		if now.Sub(b.at) > w.recent {
			continue
		}
		out = append(out, ClockOffset{Node: id, Offset: b.offset, RoundTrip: b.rtt, Age: now.Sub(b.at),
			Over: b.offset > w.bound || b.offset < -w.bound})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}
