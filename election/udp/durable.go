package udp

import (
	"log/slog"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// DefaultReplaySaveInterval is Config.ReplaySaveInterval's default.
const DefaultReplaySaveInterval = 10 * time.Second

// durableSaver decides when OnDurable runs (run loop only). The protocol's
// round, term and grant binding are saved as soon as they change and before
// the packets queued with the change leave; the replay table, which changes
// with every packet, rides along with those saves and is otherwise saved
// at most every ReplaySaveInterval, and when Run returns. (The state file
// writes such a save of the replay table alone without fsync, to a file of
// its own: statefile.ReplayFileName.)
type durableSaver struct {
	save  func(protocol.Durable) error
	every time.Duration

	// state and replay are the versions last saved, at `at`.
	state, replay uint64
	at            time.Time
	// failing is set while saves of a changed round, term or binding
	// fail, replayFailing while saves of the replay table alone do (each
	// logged once per episode).
	failing, replayFailing bool
}

func newDurableSaver(cfg Config, n *protocol.Node, now time.Time) durableSaver {
	s := durableSaver{save: cfg.OnDurable, every: cfg.ReplaySaveInterval, at: now}
	if s.every <= 0 {
		s.every = DefaultReplaySaveInterval
	}
	// What the node resumed from is on disk already.
	s.state, s.replay = n.DurableVersion()
	return s
}

// collect returns the Durable to save now, if any (ok false: nothing to
// save). final asks for the replay table too, whatever the cadence. Must
// be called with the node's lock held.
func (s *durableSaver) collect(n *protocol.Node, now time.Time, final bool) (d protocol.Durable, state, replay uint64, ok bool) {
	if s.save == nil {
		return d, 0, 0, false
	}
	state, replay = n.DurableVersion()
	due := state != s.state || (replay != s.replay && (final || !now.Before(s.at.Add(s.every))))
	if !due {
		return d, state, replay, false
	}
	return n.Durable(), state, replay, true
}

// store saves d (versions state and replay, collected at now). On error
// the round, term and binding stay unsaved: current says so, and the next
// flush retries. A failed save of the replay table alone holds nothing
// back: it is a replay floor, and the next one is tried an interval later.
func (s *durableSaver) store(log *slog.Logger, d protocol.Durable, state, replay uint64, now time.Time) {
	replayOnly := state == s.state
	if err := s.save(d); err != nil {
		switch {
		case replayOnly && !s.replayFailing:
			log.Warn("cannot save the replay table; after a restart, packets sent since the last save can be replayed once",
				"err", err)
			s.replayFailing = true
		case !replayOnly && !s.failing:
			log.Error("cannot save the election state; votes and acks are held back until it is saved, a restart may reuse a term",
				"round", d.Round, "err", err)
			s.failing = true
		}
		s.at = now // the replay table alone waits another interval
		return
	}
	if s.failing {
		log.Info("election state saved again", "round", d.Round)
		s.failing = false
	}
	if s.replayFailing {
		log.Info("replay table saved again")
		s.replayFailing = false
	}
	s.state, s.replay, s.at = state, replay, now
}

// current reports whether the round, term and binding of version state
// are on disk (or there is no disk). While they are not, no VOTE or ACK may
// leave: a node restarted from an older binding could grant that candidate
// again while the newer grant is in force.
func (s *durableSaver) current(state uint64) bool { return s.save == nil || state == s.state }

// heldBack reports whether m must wait until the election state is saved.
func heldBack(m protocol.Message) bool { return m.Type == protocol.Vote || m.Type == protocol.Ack }
