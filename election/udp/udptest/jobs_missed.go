package udptest

import (
	"strings"

	"github.com/lanleader/lanleader/jobs"
)

// A takeover counts the instants that fell due since the newest run it
// knows of as missed during the failover (coalesced into the latest,
// skipped or run once); a scheduling loop skips the instants a later one
// overtook. In quorum mode every run started was committed first, so a
// leader that may act knows it: checked after every event, no such line
// of a node that may act as leader names an instant some node started,
// unless a rerun of it did not start: the gate or the guard refused it,
// and its instant is then left to the next leadership as a missed one
// (jobs/refused.go).

// missedLines are the lines that say the instants they name were not
// started.
var missedLines = []string{"missed during failover", "jobs: instants overtaken by a later one"}

// checkMissed fails the run if l, a line of node sn, says an instant some
// node started was missed.
func (m *jobModel) checkMissed(s *Sim, sn *simNode, l jobs.LogLine) {
	if !m.checked(s) || !sn.n.CanActAsLeader(s.nodeNow(sn)) {
		return
	}
	missed := false
	for _, p := range missedLines {
		missed = missed || strings.Contains(l.Msg, p)
	}
	if !missed {
		return
	}
	first, n := m.named(s, l)
	for k := first; k < first+n; k++ {
		if by, ok := m.starts[k]; ok && !m.rerunRefused[k] {
			s.fail("%s says instant %d, which %s started, was not: %s %v", sn.id, k, by, l.Msg, l.Attrs)
			return
		}
	}
}

// notStarted records that st, decided, did not start.
func (m *jobModel) notStarted(s *Sim, st jobs.Start) {
	if st.Rerun {
		m.rerunRefused[m.index(s, st.Instant)] = true
	}
}
