package udptest

import (
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// replaySaveEvery is udp.DefaultReplaySaveInterval: how often a node with a
// state file saves a changed replay table on its own.
const replaySaveEvery = 10 * time.Second

// stateFile is one node's state file (Options.StateFiles): what survives
// its crashes.
type stateFile struct {
	disk          protocol.Durable
	state, replay uint64    // versions on disk
	at            time.Time // node clock at the last save
}

// saveState saves sn's Durable as the udp adapter does, before what sn
// queued is sent: at once when its round, term or grant binding changed,
// for the replay table alone every replaySaveEvery, or now if final (a
// graceful stop).
func (s *Sim) saveState(sn *simNode, final bool) {
	if !s.opts.StateFiles {
		return
	}
	f := &sn.file
	state, replay := sn.n.DurableVersion()
	now := s.nodeNow(sn)
	if state == f.state && (replay == f.replay || (!final && now.Before(f.at.Add(replaySaveEvery)))) {
		return
	}
	f.disk, f.state, f.replay, f.at = sn.n.Durable(), state, replay, now
}

// resumeState returns what sn resumes from at boot (zero without state
// files).
func (s *Sim) resumeState(sn *simNode) protocol.Durable {
	if !s.opts.StateFiles {
		return protocol.Durable{}
	}
	return sn.file.disk
}

// bootState takes the versions of a freshly booted node as on disk.
func (s *Sim) bootState(sn *simNode) {
	sn.file.state, sn.file.replay = sn.n.DurableVersion()
	sn.file.at = s.nodeNow(sn)
}
