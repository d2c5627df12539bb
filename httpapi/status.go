package httpapi

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/jobs"
)

// StatusDoc is the JSON document /status serves, and what FetchStatus
// returns. Fields are only ever added.
type StatusDoc struct {
	// Node is this node's id.
	Node string `json:"node"`
	// Role is "follower", "candidate" or "leader".
	Role election.Role `json:"role"`
	// Term is the highest term this node has seen.
	Term uint64 `json:"term"`
	// Leader is the leader this node knows of; its id is empty when none.
	Leader election.LeaderInfo `json:"leader"`
	// Since is when Role last changed; absent before the elector reported.
	Since time.Time `json:"since,omitzero"`
	// MayAct is what /leader answers: this node leads and may start a run
	// now (the job runner's start check). Always set by this version's
	// server; nil in a document from an older one.
	MayAct *bool `json:"may_act,omitempty"`
	// Ready is what /readyz answers: the node leads, knows a leader, or
	// (modes without a known leader, like env) has joined.
	Ready bool `json:"ready"`
	// Version is the lanleader build, when the server was told it.
	Version string `json:"version,omitempty"`
	// Time is the server's clock when it wrote the document, so a reader
	// can show how long ago Since was.
	Time time.Time `json:"time"`
	// Jobs is the job runner's per-job view (Config.Jobs), as that
	// package defines it; absent when there is none.
	Jobs json.RawMessage `json:"jobs,omitempty"`
	// Services are the leader-only services' state on this node
	// (Config.Services); absent when none are configured.
	Services []jobs.ServiceStatus `json:"services,omitempty"`
	// Extra is any further view (peers heard and when, ...) from
	// Config.Extra; absent when there is none.
	Extra json.RawMessage `json:"extra,omitempty"`
	// Warnings lists parts of the document that could not be produced
	// (a view that failed to encode), rather than failing the request.
	Warnings []string `json:"warnings,omitempty"`
}

// joiner is implemented by electors whose readiness is not "knows a
// leader": an env-mode follower never learns who leads.
type joiner interface{ Joined() bool }

// Readiness says whether the elector has joined (it leads, knows a leader,
// or implements Joined() bool and says so), and why not in words: the one
// rule for /readyz and systemd's READY=1.
func Readiness(el election.Elector, s election.Status) (bool, string) {
	switch {
	case s.Role == election.Leader:
		return true, "leading, term " + uitoa(s.Term)
	case s.Leader.Known():
		return true, "following " + s.Leader.ID + ", term " + uitoa(s.Leader.Term)
	}
	if j, ok := el.(joiner); ok && j.Joined() {
		return true, s.Role.String() + ", joined"
	}
	return false, "no leader known yet (role " + s.Role.String() + ", term " + uitoa(s.Term) + ")"
}

func uitoa(u uint64) string { return strconv.FormatUint(u, 10) }
