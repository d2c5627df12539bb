package udptest

import (
	"math"
	"time"
)

// Host clocks. Every node reads its own clock: sim time scaled by the
// node's rate (drift) and shifted by its offset (a suspend with a clock
// that stopped). The protocol's timing bounds assume rates within 20 % of
// each other (docs/protocol.md): Options.Drift draws rates within that.

// nodeClock is one host's clock: rate × (sim time since start) + offset.
type nodeClock struct {
	rate   float64
	offset time.Duration
}

// drawClock gives a host its clock rate: Options.ClockRates[id] if set,
// else uniform in [1, 1+Drift].
func (s *Sim) drawClock(id string) nodeClock {
	if r, ok := s.opts.ClockRates[id]; ok {
		return nodeClock{rate: r}
	}
	if s.opts.Drift == 0 {
		return nodeClock{rate: 1}
	}
	return nodeClock{rate: 1 + s.opts.Drift*s.rng.Float64()}
}

// nodeNow is sim time now as sn's clock reads it.
func (s *Sim) nodeNow(sn *simNode) time.Time { return s.toNode(sn, s.now) }

// toNode converts sim time t to sn's clock.
func (s *Sim) toNode(sn *simNode, t time.Time) time.Time {
	el := time.Duration(float64(t.Sub(s.start)) * sn.clock.rate)
	return s.start.Add(el + sn.clock.offset)
}

// toSim converts a reading of sn's clock to the first sim instant at which
// sn's clock reads at least nt.
func (s *Sim) toSim(sn *simNode, nt time.Time) time.Time {
	el := nt.Sub(s.start) - sn.clock.offset
	t := s.start.Add(time.Duration(math.Ceil(float64(el) / sn.clock.rate)))
	for s.toNode(sn, t).Before(nt) {
		t = t.Add(time.Nanosecond)
	}
	return t
}

// SetClockRate changes id's clock rate from now on; its reading does not
// jump.
func (s *Sim) SetClockRate(id string, rate float64) {
	sn := s.mustNode(id)
	now := s.nodeNow(sn)
	sn.clock.rate = rate
	sn.clock.offset += now.Sub(s.nodeNow(sn))
	s.logf("%s clock rate %v", id, rate)
}

// Suspend puts id's host to sleep for d (a NAS suspending at night): like
// Pause nothing runs, and packets sent to it meanwhile are lost (a
// sleeping host does not receive). With clockStops the node's clock does not count
// the sleep — Go's monotonic clock on a suspended host, the bug the udp
// adapter's SystemClock exists to avoid; without, it does (CLOCK_BOOTTIME),
// and the node sees a pause.
func (s *Sim) Suspend(id string, d time.Duration, clockStops bool) {
	sn := s.mustNode(id)
	if !sn.up || sn.paused {
		return
	}
	s.logf("%s suspend %v clockStops=%v", id, d, clockStops)
	s.Pause(id)
	sn.asleep = true
	sn.sleeps++
	gen, sleep := sn.starts, sn.sleeps
	s.At(s.now.Add(d), func() {
		if sn.starts != gen || sn.sleeps != sleep || !sn.asleep {
			return // restarted, woken (Resume) or asleep again meanwhile
		}
		sn.asleep = false
		if clockStops {
			sn.clock.offset -= time.Duration(float64(d) * sn.clock.rate)
		}
		s.Resume(id)
	})
}
