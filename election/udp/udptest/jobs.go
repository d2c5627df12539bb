package udptest

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
)

// A model of the job runner on every simulated node, for the invariant the
// runner builds on the protocol: no scheduled instant is ever started
// twice. One job is due every Jobs.Every. Each node keeps a pool: the
// newest instant it knows started (its own, or heard in any payload). The
// pool survives crashes, as the state file does; a paused process keeps
// all it had, its runs waiting at the gate included. A leader:
//
//   - on taking over, waits Jobs.Gather before deciding whether the latest
//     instant up to the takeover was missed (run-once) and, with
//     Jobs.Rerun, whether to run again the newest instant another process
//     started (rerun_interrupted, as if every run outlasted a failover);
//     instants due after the takeover fire on time;
//   - fires an instant only if it is newer than its pool and it may act as
//     leader; it records the instant in its pool and publishes it;
//   - starts it once the protocol says the payload is committed and this
//     node may act (Committed: quorum mode, a majority acked it within
//     the lease; otherwise, the heartbeat was sent), then asks
//     CanActAsLeader again, as the runner asks its guard before it execs.
//
// A rerun is an instant's second start by design; any start after it is a
// duplicate. Legacy models the runner before gathering: no window, and
// only leaders' payloads (heartbeat, answer, resign) are heard.

// Jobs configures the job model (Options.Jobs).
type Jobs struct {
	// Every is the job's period; zero means 1 s.
	Every time.Duration
	// Gather is the new leader's gathering window; Legacy ignores it.
	Gather time.Duration
	// Legacy models the runner before gathering (see above).
	Legacy bool
	// Strict makes a duplicate start an invariant violation (quorum mode:
	// always; otherwise only where the run was clean).
	Strict bool
	// Rerun models rerun_interrupted (see above).
	Rerun bool
}

// JobStats are the job model's figures.
type JobStats struct {
	// Starts counts instants started; Duplicates, starts of an instant
	// already started elsewhere (or before); Reruns, second starts of
	// instants by a new leader (Jobs.Rerun).
	Starts, Duplicates, Reruns int
	// Failovers counts leaderships after the first.
	Failovers int
}

// jobNode is one node's model runner.
type jobNode struct {
	pool     int64 // newest instant index known started; survives crashes
	inc      uint64
	set      []byte // payload last handed to this life's Node
	leading  bool
	term     uint64
	takeover time.Time
	decided  bool
	cursor   int64
	// own is the newest instant this process fired; prior, while a
	// leadership gathers, the newest instant due before its takeover that
	// another process started (Jobs.Rerun).
	own, prior int64
	pending    []pendingStart
}

type pendingStart struct {
	instant int64
	ver     uint64
	rerun   bool
}

// jobModel is the Sim's job model state.
type jobModel struct {
	cfg    Jobs
	nodes  map[string]*jobNode
	starts map[int64]string // instant → node that started it (or reran it first)
	stats  JobStats
	leads  int
}

func newJobModel(cfg Jobs) *jobModel {
	if cfg.Every == 0 {
		cfg.Every = time.Second
	}
	return &jobModel{cfg: cfg, nodes: map[string]*jobNode{}, starts: map[int64]string{}}
}

// JobStats returns the job model's figures (zero without Options.Jobs).
func (s *Sim) JobStats() JobStats {
	if s.jobs == nil {
		return JobStats{}
	}
	return s.jobs.stats
}

func encodePool(k int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(k)) }

func decodePool(p []byte) (int64, bool) {
	if len(p) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(p)), true
}

// index is the instant index of t (instants at multiples of Every since
// the sim's start).
func (m *jobModel) index(s *Sim, t time.Time) int64 { return int64(t.Sub(s.start) / m.cfg.Every) }

// step runs every node's model after an event.
func (m *jobModel) step(s *Sim) {
	for _, id := range s.ids {
		sn := s.nodes[id]
		jn := m.nodes[id]
		if jn == nil {
			jn = &jobNode{}
			m.nodes[id] = jn
		}
		if !sn.up {
			jn.leading, jn.pending = false, nil
			continue
		}
		if sn.paused {
			continue // stalled: nothing runs, nothing is forgotten
		}
		if jn.inc != sn.inc { // a new process life: memory lost, pool kept
			jn.inc, jn.set, jn.leading, jn.pending, jn.own = sn.inc, nil, false, nil, 0
		}
		m.hear(s, sn, jn)
		m.lead(s, sn, jn)
		if p := encodePool(jn.pool); !slices.Equal(p, jn.set) {
			jn.set = p
			if jn.leading {
				sn.n.Publish(s.nodeNow(sn), p)
			} else {
				sn.n.SetPayload(p)
			}
		}
		m.settle(s, sn, jn)
		for _, e := range sn.n.Ready() {
			s.send(sn.id, e)
		}
	}
}

// hear merges every payload the node received into its pool.
func (m *jobModel) hear(s *Sim, sn *simNode, jn *jobNode) {
	for _, h := range sn.n.Payloads() {
		if m.cfg.Legacy && h.Type != 1 && h.Type != 3 && h.Type != 5 { // heartbeat, resign, answer
			continue
		}
		k, ok := decodePool(h.Payload)
		if !ok {
			continue
		}
		jn.pool = max(jn.pool, k)
		if jn.leading && !jn.decided && k > jn.prior && k != jn.own && k <= m.index(s, jn.takeover) {
			jn.prior = k
		}
	}
}

// lead follows leadership changes and fires due instants.
func (m *jobModel) lead(s *Sim, sn *simNode, jn *jobNode) {
	st := sn.n.Status()
	leading := st.Role == election.Leader
	if !leading {
		jn.leading, jn.pending = false, nil
		return
	}
	if !jn.leading || jn.term != st.Leader.Term {
		m.leads++
		if m.leads > 1 {
			m.stats.Failovers++
		}
		jn.leading, jn.term, jn.takeover, jn.decided = true, st.Leader.Term, s.now, false
		jn.cursor = m.index(s, s.now)
		jn.pending = nil
		jn.prior = 0
		if jn.pool != jn.own {
			jn.prior = jn.pool
		}
	}
	gather := m.cfg.Gather
	if m.cfg.Legacy {
		gather = 0
	}
	if !jn.decided && !s.now.Before(jn.takeover.Add(gather)) {
		jn.decided = true
		if m.cfg.Rerun && jn.prior > 0 {
			m.fire(s, sn, jn, jn.prior, true) // another process's run, interrupted
		}
		if k := m.index(s, jn.takeover); k > jn.pool && k > 0 {
			m.fire(s, sn, jn, k, false) // run-once of the instant missed in the failover
		}
	}
	for k := jn.cursor + 1; k <= m.index(s, s.now); k++ {
		jn.cursor = k
		if k > jn.pool {
			m.fire(s, sn, jn, k, false)
		}
	}
}

// fire records instant k and queues its start for when it is committed.
func (m *jobModel) fire(s *Sim, sn *simNode, jn *jobNode, k int64, rerun bool) {
	if !sn.n.CanActAsLeader(s.nodeNow(sn)) {
		return
	}
	jn.pool, jn.own = max(jn.pool, k), k
	p := encodePool(jn.pool)
	jn.set = p
	sn.n.Publish(s.nodeNow(sn), p)
	jn.pending = append(jn.pending, pendingStart{instant: k, ver: sn.n.PayloadVersion(), rerun: rerun})
	s.logf("%s job fires instant %d (term %x, rerun %v)", sn.id, k, jn.term, rerun)
}

// settle starts the pending instants whose record is committed, asking
// CanActAsLeader again right before (the runner's guard before exec).
func (m *jobModel) settle(s *Sim, sn *simNode, jn *jobNode) {
	keep := jn.pending[:0]
	for _, p := range jn.pending {
		if !sn.n.Committed(s.nodeNow(sn), p.ver) {
			keep = append(keep, p)
			continue
		}
		if !sn.n.CanActAsLeader(s.nodeNow(sn)) {
			continue // refused: not started
		}
		m.start(s, sn, p.instant, p.rerun)
	}
	jn.pending = keep
}

func (m *jobModel) start(s *Sim, sn *simNode, k int64, rerun bool) {
	id := sn.id
	m.stats.Starts++
	if rerun {
		m.stats.Reruns++
		if _, ok := m.starts[k]; !ok {
			m.starts[k] = id
		}
		s.logf("%s job reruns instant %d", id, k)
		return
	}
	if prev, dup := m.starts[k]; dup {
		m.stats.Duplicates++
		s.logf("DUPLICATE: instant %d started by %s and %s", k, prev, id)
		// Without quorum, as for exclusion (invariants.go), a node still
		// reading what queued during a stall does not know yet that it
		// was succeeded.
		if m.cfg.Strict && (s.opts.Base.ClusterSize > 0 || !s.inv.dirty && len(sn.waking) == 0) {
			s.fail("instant %d started twice: by %s and by %s", k, prev, id)
		}
		return
	}
	m.starts[k] = id
	s.logf("%s job starts instant %d", id, k)
}

// add adds o's figures to j's.
func (j *JobStats) add(o JobStats) {
	j.Starts, j.Duplicates, j.Reruns, j.Failovers = j.Starts+o.Starts, j.Duplicates+o.Duplicates, j.Reruns+o.Reruns, j.Failovers+o.Failovers
}

// String summarizes the figures.
func (j JobStats) String() string {
	return fmt.Sprintf("%d starts (%d reruns), %d duplicates, %d failovers", j.Starts, j.Reruns, j.Duplicates, j.Failovers)
}
