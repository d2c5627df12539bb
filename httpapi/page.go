package httpapi

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/jobs"
)

// The status page: one server-rendered HTML document with its CSS inline,
// no scripts and no external assets, so it works offline on the LAN, on a
// phone, and without JavaScript. It reloads itself with a meta refresh.

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"clock":    func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"ago":      ago,
	"dur":      func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"offset":   signedDuration,
	"kind":     runKind,
	"started":  runStarted,
	"duration": runDuration,
	"exit":     runExit,
	"attempts": runAttempts,
}).Parse(pageHTML))

// DefaultRefresh is how often the page reloads itself, in seconds; ?refresh=N
// (1-3600) overrides it.
const DefaultRefresh = 5

// pageRuns is how many recent runs per job the page shows.
const pageRuns = 5

// NodeView is one node as the status page lists it.
type NodeView struct {
	ID   string
	Addr string
	// Role is "leader", "follower", "rival leader", ... as this node sees it.
	Role string
	// Ago is how long since it was last heard; zero for this node.
	Ago time.Duration
	// Self marks this node.
	Self bool
	// Clock is how far the node's wall clock is from this node's, when
	// this node measured it (nil if not: a follower measures only its
	// leader).
	Clock *ClockView
}

// ClockView is a node's clock offset from this node's, for the page.
type ClockView struct {
	// Offset is its clock minus this node's.
	Offset time.Duration
	// Over: beyond the bound (a WARN names it).
	Over bool
}

// QuorumView is quorum mode's state for the page.
type QuorumView struct {
	// Size is the number of voters; 0 means quorum mode is off.
	Size, Majority, Reachable, Heard int
	// Witnesses is how many of those heard are witnesses.
	Witnesses int
	// Lost: no majority reachable; no leader acts.
	Lost bool
	// Overfull: more nodes heard than Size.
	Overfull bool
	// Guarantee is the line the node logged at start: quorum or not, and
	// what a partition does.
	Guarantee string
	// Witness: this node is a witness (the page shows it as its role).
	Witness bool
}

// pageData is what page.html renders.
type pageData struct {
	Node, Role, Version string
	Leader              election.LeaderInfo
	Term                uint64
	Since               time.Time
	Ready               bool
	ReadyWhy            string
	MayNotAct           bool // leads but may not start a run now (/leader 503)
	Quorum              QuorumView
	HasQuorum           bool
	QuorumKnown         bool
	Nodes               []NodeView
	Jobs                []jobs.JobView
	Services            []jobs.ServiceStatus
	Changes             []Change
	Now                 time.Time
	Refresh             int
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	refresh := DefaultRefresh
	if v := r.URL.Query().Get("refresh"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 3600 {
			writeText(w, http.StatusBadRequest, fmt.Sprintf("refresh=%q: want seconds from 1 to 3600", v))
			return
		}
		refresh = n
	}
	l := s.leadership()
	st := l.Status
	ready, why := Readiness(s.cfg.Elector, st)
	d := pageData{
		Node: st.Node, Role: st.Role.String(), Version: s.cfg.Version, Leader: st.Leader, Term: st.Term,
		Since: st.Since, Ready: ready, ReadyWhy: why, MayNotAct: st.IsLeader() && !l.MayAct,
		Now: s.now(), Refresh: refresh,
	}
	if s.cfg.Quorum != nil {
		d.Quorum = s.cfg.Quorum()
		d.HasQuorum = d.Quorum.Size > 0
		d.QuorumKnown = true

	}
	d.Nodes = s.nodes(st)
	if d.Quorum.Witness {
		d.Role, d.Nodes[0].Role = "witness", "witness" // a follower that never leads
	}
	if s.cfg.JobViews != nil {
		d.Jobs = s.cfg.JobViews(pageRuns)
	}
	if s.cfg.Services != nil {
		d.Services = s.cfg.Services()
	}
	if s.cfg.Changes != nil {
		d.Changes = s.cfg.Changes.Changes()
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, d); err != nil {
		s.log.Error("httpapi: render status page", "err", err)
		writeText(w, http.StatusInternalServerError, "render page: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// Nothing on the page comes from elsewhere: forbid everything else.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	_, _ = w.Write(buf.Bytes())
}

// nodes lists this node first, then the others the mode reports, marking
// the known leader.
func (s *Server) nodes(st election.Status) []NodeView {
	out := []NodeView{{ID: st.Node, Role: st.Role.String(), Self: true}}
	if st.Role == election.Leader {
		out[0].Addr = st.Leader.Addr
	}
	leaderListed := st.Leader.ID == st.Node
	if s.cfg.Nodes != nil {
		for _, n := range s.cfg.Nodes() {
			if n.ID == st.Node {
				continue
			}
			if n.ID == st.Leader.ID {
				n.Role, leaderListed = "leader", true
				if n.Addr == "" {
					n.Addr = st.Leader.Addr
				}
			}
			out = append(out, n)
		}
	}
	if st.Leader.Known() && !leaderListed {
		out = append(out, NodeView{ID: st.Leader.ID, Addr: st.Leader.Addr, Role: "leader"})
	}
	return out
}

// ago prints a duration for people: "3s ago", "2m ago".
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + (-d).Round(time.Second).String()
	}
	return d.Round(time.Second).String() + " ago"
}

// signedDuration is d with its sign always written: "+5.002s", "-80ms",
// "+0s".
func signedDuration(d time.Duration) string {
	if d < 0 {
		return d.Round(time.Millisecond).String()
	}
	return "+" + d.Round(time.Millisecond).String()
}
