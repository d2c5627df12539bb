package udptest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Link describes the simulated network between every pair of nodes.
type Link struct {
	// Loss is the probability that one delivery (one receiver of one
	// message) is dropped.
	Loss float64
	// Delay is the base one-way delay.
	Delay time.Duration
	// Jitter is added uniformly in [0, Jitter) to each delivery; it also
	// reorders messages sent closer together than Jitter.
	Jitter time.Duration
	// Dup is the probability that a delivery happens twice.
	Dup float64
	// Reorder is the probability that a delivery is held back by up to
	// 10× (Delay+Jitter) extra, overtaken by later messages.
	Reorder float64
	// Burst, if set, replaces Loss by bursty loss (burst.go).
	Burst *GilbertElliott
}

// LAN is a loss-free local network: 0.2 ms ± 0.1 ms one way.
var LAN = Link{Delay: 200 * time.Microsecond, Jitter: 100 * time.Microsecond}

// MaxDelay is the longest one delivery can take on l.
func (l Link) MaxDelay() time.Duration {
	d := l.Delay + l.Jitter
	if l.Reorder > 0 {
		d += 10 * (l.Delay + l.Jitter)
	}
	return d
}

// Options configure a Sim.
type Options struct {
	// Seed makes the run reproducible: the same seed, options and calls
	// give the same run.
	Seed uint64
	// Base is the protocol config every node starts from; NodeID,
	// Incarnation and Rand are set by the Sim. Zero value: DefaultLANConfig.
	Base protocol.Config
	// Configure, if set, adjusts one node's config (priority, preempt...).
	Configure func(id string, c *protocol.Config)
	// Link is the initial network.
	Link Link
	// Trace keeps a textual trace of every event (needed for replay output;
	// costs memory on long runs).
	Trace bool
	// TraceLimit keeps only the last TraceLimit lines; 0 means 5000.
	TraceLimit int
	// Probes makes a crashed leader's host answer the nodes' leader
	// probes with "unreachable", as a real kernel does (probe.go).
	Probes bool
	// Drift: each host's clock runs at a rate drawn uniformly in
	// [1, 1+Drift] of sim time (0.2: the documented 20 %). ClockRates sets
	// chosen hosts' rates instead.
	Drift      float64
	ClockRates map[string]float64
	// NoCheck turns off invariant checks after every event (benchmarks).
	NoCheck bool
	// Jobs, if set, runs the job runner's rules (jobs.Core, jobs.go) on
	// every node.
	Jobs *Jobs
	// StateFiles gives every node a state file (state.go): its Durable is
	// saved as the udp adapter saves it, and a restarted node resumes from
	// it. A crash loses what was not saved yet.
	StateFiles bool
	// feed, if set, changes the status each Notifier is fed; tests use it
	// to emulate a Notifier bug and see the callback checks catch it.
	feed func(election.Status) election.Status
}

// simNode is one simulated process.
type simNode struct {
	id    string
	clock nodeClock
	// asleep: the host is suspended (clocks.go); deliveries are lost.
	// sleeps counts Suspends, so that a wake-up ends only its own sleep.
	asleep bool
	sleeps int
	n      *protocol.Node
	up     bool
	paused bool
	// buffered holds deliveries that arrived while paused (the socket
	// buffer), handed over on Resume; waking, what a resumed node still
	// has to handle, one evWake of generation wakes (a count of Resumes)
	// each.
	buffered []protocol.Message
	waking   []wakeStep
	wakes    uint64
	gen      uint64
	// echo: the node's config has SelfEcho, so its broadcasts loop back.
	echo bool
	// witness: the node's config has Witness: it must never lead.
	witness bool
	tickAt  time.Time
	inc     uint64
	starts  int
	// lastRole and lastTerm track transitions for invariants and figures.
	lastRole election.Role
	lastTerm uint64
	maxTerm  uint64
	// app is the current process life's application (callbacks.go); nil
	// while down. callbacks records what every life was told.
	app       *app
	callbacks []CallbackEvent
	// hostDown says a crash took the host down too (probes go
	// unanswered, no "unreachable").
	hostDown bool
	// file is the node's state file (Options.StateFiles).
	file stateFile
}

// Sim is a simulated cluster on a fake clock. It is not safe for
// concurrent use.
type Sim struct {
	opts  Options
	jobs  *jobModel
	rng   *rand.Rand
	now   time.Time
	start time.Time
	q     eventHeap
	evSeq uint64
	nodes map[string]*simNode
	ids   []string
	// cut[from][to] drops everything from → to.
	cut map[string]map[string]bool
	// deaf and mute are one-way faults of one node (hearing.go); deafAt
	// is when each deaf node became deaf.
	deaf, mute map[string]bool
	deafAt     map[string]time.Time
	link       Link
	// burstBad is the Gilbert–Elliott state of each directed link.
	burstBad map[[2]string]bool

	trace []string
	// Err is the first invariant violation, nil while none.
	Err error
	inv invariants
	// Figures collected during the run.
	Counters Counters
	// AfterEvent, if set, is called after every event (for figures and
	// extra checks).
	AfterEvent func()
	// OnLeader, if set, is called whenever a node becomes leader.
	OnLeader func(id string, term uint64, at time.Time)
	// watch maps node → side of the last partition, set by Heal until the
	// first packet crosses between sides (crossedAt).
	watch     map[string]int
	lastSides map[string]int
	crossedAt time.Time
}

// Counters are figures a Sim collects.
type Counters struct {
	// BecameLeader counts every transition of some node to leader.
	BecameLeader int
	// Delivered and Dropped count deliveries.
	Delivered, Dropped int
	// Events counts processed events.
	Events int
	// Probes counts leader probes sent (with Options.Probes).
	Probes int
}

// New returns a Sim with nodes named ids, all started at the sim's epoch.
func New(opts Options, ids ...string) *Sim {
	if opts.Base.Interval == 0 {
		opts.Base = protocol.DefaultLANConfig()
	}
	if opts.Base.Cluster == "" {
		opts.Base.Cluster = "sim"
	}
	if opts.TraceLimit == 0 {
		opts.TraceLimit = 5000
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &Sim{
		opts:   opts,
		rng:    rand.New(rand.NewPCG(opts.Seed, 0x5eed)),
		now:    epoch,
		start:  epoch,
		nodes:  map[string]*simNode{},
		cut:    map[string]map[string]bool{},
		deaf:   map[string]bool{},
		mute:   map[string]bool{},
		deafAt: map[string]time.Time{},
		link:   opts.Link,
	}
	s.inv.init()
	if opts.Jobs != nil {
		s.jobs = newJobModel(*opts.Jobs, opts.Base)
	}
	s.checkLinkClean()
	for _, id := range ids {
		s.Add(id)
	}
	return s
}

// Now returns the simulated time.
func (s *Sim) Now() time.Time { return s.now }

// Elapsed returns the simulated time since the start.
func (s *Sim) Elapsed() time.Duration { return s.now.Sub(s.start) }

// Node returns the protocol node of id (nil if unknown). After Restart it
// is a new Node.
func (s *Sim) Node(id string) *protocol.Node {
	if sn := s.nodes[id]; sn != nil {
		return sn.n
	}
	return nil
}

// IDs returns all node ids, sorted.
func (s *Sim) IDs() []string { return slices.Clone(s.ids) }

// Up reports whether id is running (not crashed; possibly paused).
func (s *Sim) Up(id string) bool { sn := s.nodes[id]; return sn != nil && sn.up }

// Rand returns the sim's random source, for scenario generators that must
// stay reproducible.
func (s *Sim) Rand() *rand.Rand { return s.rng }

// SetLink changes the network for deliveries scheduled from now on.
func (s *Sim) SetLink(l Link) {
	s.link = l
	s.checkLinkClean()
	s.logf("link %+v", l)
}

// Add starts a new node id now.
func (s *Sim) Add(id string) {
	if _, ok := s.nodes[id]; ok {
		panic(fmt.Sprintf("udptest: node %q added twice", id))
	}
	sn := &simNode{id: id}
	sn.clock = s.drawClock(id)
	s.nodes[id] = sn
	s.ids = append(s.ids, id)
	slices.Sort(s.ids)
	s.boot(sn)
}

// boot starts (or restarts) sn with a fresh incarnation.
func (s *Sim) boot(sn *simNode) {
	cfg := s.opts.Base
	cfg.NodeID = sn.id
	sn.starts++
	// Ordered incarnations: a restart always gets a larger one, as
	// NewIncarnation(unix ms, rand) does on a real host.
	sn.inc = protocol.NewIncarnation(s.now.UnixMilli()+int64(sn.starts), uint16(s.rng.Uint32()))
	cfg.Incarnation = sn.inc
	cfg.Rand = rand.New(rand.NewPCG(s.rng.Uint64(), s.rng.Uint64()))
	cfg.Resume = s.resumeState(sn)
	if s.opts.Configure != nil {
		s.opts.Configure(sn.id, &cfg)
	}
	sn.echo, sn.witness = cfg.SelfEcho, cfg.Witness
	n, err := protocol.NewNode(cfg, s.nodeNow(sn))
	if err != nil {
		panic(fmt.Sprintf("udptest: node %s: %v", sn.id, err))
	}
	sn.n, sn.up, sn.paused, sn.buffered, sn.waking, sn.asleep = n, true, false, nil, nil, false
	s.bootState(sn)
	sn.hostDown = false
	sn.lastRole, sn.lastTerm, sn.maxTerm = election.Follower, 0, 0
	s.bootApp(sn)
	s.logf("%s start inc=%d", sn.id, sn.inc)
	s.after(sn)
}

// after collects sn's outgoing messages, reschedules its tick, checks
// invariants and reports the status to sn's application (as udp.Elector.Run
// does after every Tick and Step: send, then Notifier.Update).
func (s *Sim) after(sn *simNode) {
	s.saveState(sn, false)
	for _, e := range sn.n.Ready() {
		s.send(sn.id, e)
	}
	if next := sn.n.NextTick(); !next.Equal(sn.tickAt) || sn.gen == 0 {
		sn.gen++
		sn.tickAt = next
		at := s.toSim(sn, next)
		if at.Before(s.now) {
			at = s.now
		}
		s.push(&event{at: at, kind: evTick, node: sn.id, gen: sn.gen})
	}
	s.observe(sn)
	s.notify(sn)
}

// send schedules the deliveries of one envelope.
func (s *Sim) send(from string, e protocol.Envelope) {
	if e.Msg.Type == protocol.Probe {
		s.answerProbe(s.nodes[from], protocol.ProbeRequest{Leader: e.To, Term: e.Msg.Term})
	}
	if s.opts.Trace {
		s.logf("%s send %s to=%q term=%x seq=%d succ=%q", from, e.Msg.Type, e.To, e.Msg.Term, e.Msg.Seq, e.Msg.Successor)
	}
	for _, to := range s.ids {
		if to == from && e.To == "" && s.nodes[from].echo {
			if !s.deaf[from] {
				m := e.Msg
				m.Addr = "sim/" + from
				s.push(&event{at: s.now.Add(echoDelay), kind: evDeliver, node: to, msg: m})
			}
			continue
		}
		if to == from || (e.To != "" && e.To != to) {
			continue
		}
		if s.dropped(from, to) {
			s.Counters.Dropped++
			continue
		}
		if s.lost(from, to) {
			s.Counters.Dropped++
			continue
		}
		copies := 1
		if s.link.Dup > 0 && s.rng.Float64() < s.link.Dup {
			copies = 2
		}
		for range copies {
			d := s.link.Delay
			if s.link.Jitter > 0 {
				d += time.Duration(s.rng.Int64N(int64(s.link.Jitter)))
			}
			if s.link.Reorder > 0 && s.rng.Float64() < s.link.Reorder {
				d += time.Duration(s.rng.Int64N(int64(10*(s.link.Delay+s.link.Jitter)) + 1))
			}
			m := e.Msg
			m.Addr = "sim/" + from
			m.Payload = slices.Clone(m.Payload)
			s.push(&event{at: s.now.Add(d), kind: evDeliver, node: to, msg: m})
		}
	}
}

// At schedules fn at simulated time t (or now if t is past).
func (s *Sim) At(t time.Time, fn func()) {
	if t.Before(s.now) {
		t = s.now
	}
	s.push(&event{at: t, kind: evFunc, fn: fn})
}

// Run processes events until d of simulated time has passed or an
// invariant fails.
func (s *Sim) Run(d time.Duration) { s.RunUntil(s.now.Add(d), nil) }

// RunUntil processes events until end, until cond (checked after every
// event) is true, or until an invariant fails. It reports whether cond
// became true.
func (s *Sim) RunUntil(end time.Time, cond func() bool) bool {
	for s.Err == nil {
		if cond != nil && cond() {
			return true
		}
		if len(s.q) == 0 || s.q[0].at.After(end) {
			break
		}
		s.step(s.pop())
	}
	if end.After(s.now) && s.Err == nil {
		s.now = end
	}
	return cond != nil && cond()
}

func (s *Sim) step(e *event) {
	s.now = e.at
	s.Counters.Events++
	s.handle(e)
	if s.jobs != nil {
		s.jobs.step(s)
	}
	if !s.opts.NoCheck {
		s.checkExclusion()
		s.checkApps()
	}
	if s.AfterEvent != nil {
		s.AfterEvent()
	}
}

func (s *Sim) handle(e *event) {
	switch e.kind {
	case evFunc:
		e.fn()
	case evTick:
		sn := s.nodes[e.node]
		if !sn.up || e.gen != sn.gen {
			return
		}
		if sn.paused || len(sn.waking) > 0 {
			return // Resume ticks it
		}
		sn.n.Tick(s.nodeNow(sn))
		s.after(sn)
	case evWake:
		sn := s.nodes[e.node]
		if sn.up && e.gen == sn.wakes && len(sn.waking) > 0 {
			s.wake(sn)
		}
	case evDeliver:
		sn := s.nodes[e.node]
		if !sn.up {
			s.Counters.Dropped++
			return
		}
		if s.watch != nil && s.crossedAt.IsZero() && s.watch[e.msg.From] != s.watch[e.node] {
			s.crossedAt = s.now
			s.logf("first packet crosses %s->%s", e.msg.From, e.node)
		}
		if sn.asleep {
			s.Counters.Dropped++
			return
		}
		if sn.paused {
			sn.buffered = append(sn.buffered, e.msg)
			return
		}
		if len(sn.waking) > 0 {
			sn.waking = append(sn.waking, wakeStep{msg: e.msg}) // behind the queued ones
			return
		}
		s.Counters.Delivered++
		if s.opts.Trace {
			s.logf("%s recv %s from=%s term=%x seq=%d", e.node, e.msg.Type, e.msg.From, e.msg.Term, e.msg.Seq)
		}
		sn.n.Step(s.nodeNow(sn), e.msg)
		s.after(sn)
	}
}

// checkLinkClean marks the run dirty when the link can lose a message or
// delay a claim and its answer past the claim window: both make two
// overlapping leaders legitimate without quorum.
func (s *Sim) checkLinkClean() {
	if s.link.Loss > 0 || s.link.Burst != nil {
		s.MarkDirty("loss")
	}
	if 2*s.link.MaxDelay() >= s.opts.Base.Timings().ClaimWindow {
		s.MarkDirty("delay beyond the claim window")
	}
}
