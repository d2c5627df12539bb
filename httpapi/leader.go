package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
)

// LeaderDoc is the JSON document /leader serves, and what FetchLeader
// returns: whether this node leads and may act now. Fields are only ever
// added.
type LeaderDoc struct {
	// Node is this node's id.
	Node string `json:"node"`
	// Role is "follower", "candidate" or "leader".
	Role election.Role `json:"role"`
	// Term is the term this node leads under (its jobs' LANLEADER_TERM)
	// when it leads; otherwise the highest term it has seen.
	Term uint64 `json:"term"`
	// Since is when Role last changed; absent before the elector reported.
	Since time.Time `json:"since,omitzero"`
	// MayAct is true while this node leads and may start a run now: the
	// predicate the job runner asks before every start (Config.MayAct).
	MayAct bool `json:"may_act"`
	// Leader is the leader this node knows of; its id is empty when none.
	Leader election.LeaderInfo `json:"leader"`
	// Reason says in words why MayAct is false; empty when it is true.
	Reason string `json:"reason,omitempty"`
}

// Leadership is this node's standing as /status and /leader report it:
// the elector's status and whether the node may act. Both documents are
// built from one Leadership, so they never disagree within a request.
type Leadership struct {
	Status election.Status
	MayAct bool
}

// leadership reads the elector's status and the may-act predicate. A node
// may act only while the status says it leads too: a step-down between the
// two reads must not answer "may act" for a follower.
func (s *Server) leadership() Leadership {
	may := s.mayAct()
	st := s.cfg.Elector.Status()
	return Leadership{Status: st, MayAct: may && st.IsLeader()}
}

// mayAct asks Config.MayAct, or, without one, whether the elector leads.
func (s *Server) mayAct() bool {
	if s.cfg.MayAct != nil {
		return s.cfg.MayAct()
	}
	return s.cfg.Elector.Status().IsLeader()
}

// LeaderDoc builds the document /leader serves from l.
func (l Leadership) LeaderDoc() LeaderDoc {
	st := l.Status
	doc := LeaderDoc{Node: st.Node, Role: st.Role, Term: st.Term, Since: st.Since, MayAct: l.MayAct, Leader: st.Leader}
	if st.IsLeader() && st.Leader.Term != 0 {
		doc.Term = st.Leader.Term
	}
	switch {
	case l.MayAct:
	case st.IsLeader():
		doc.Reason = "leads term " + uitoa(doc.Term) + " but may not act now: its standing is not confirmed (paused, quorum lease not renewed) or lanleader is stopping"
	case st.Leader.Known():
		doc.Reason = st.Role.String() + "; " + st.Leader.ID + " leads term " + uitoa(st.Leader.Term)
	default:
		doc.Reason = st.Role.String() + "; no leader known"
	}
	return doc
}

// leaderHandler serves /leader: 200 while this node leads and may act, 503
// otherwise, with a LeaderDoc either way. A load balancer's health check
// needs only the status code; an application reads the body.
func (s *Server) leaderHandler(w http.ResponseWriter, _ *http.Request) {
	doc := s.leadership().LeaderDoc()
	b, err := json.Marshal(doc)
	if err != nil {
		s.log.Error("httpapi: encode leader", "err", err)
		writeText(w, http.StatusInternalServerError, "encode leader: "+err.Error())
		return
	}
	code := http.StatusOK
	if !doc.MayAct {
		code = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// FetchLeader asks /leader of the endpoint at addr (as FetchStatus). A nil
// error means the node answered: doc.MayAct says whether it may act (200)
// or not (503). An error (unreachable, timed out, another status code, a
// body that is not a LeaderDoc or disagrees with its status code) means
// whether it may act is not known.
func FetchLeader(ctx context.Context, addr string) (LeaderDoc, error) {
	url := endpointURL(addr, "/leader")
	resp, body, err := get(ctx, url, "leader")
	if err != nil {
		return LeaderDoc{}, err
	}
	var doc LeaderDoc
	switch {
	case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable:
		err = fmt.Errorf("httpapi: leader from %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	case json.Unmarshal(body, &doc) != nil:
		err = fmt.Errorf("httpapi: leader from %s: %s: body is not a /leader document: %.80q", url, resp.Status, body)
	case doc.MayAct != (resp.StatusCode == http.StatusOK):
		err = fmt.Errorf("httpapi: leader from %s: %s with may_act %t", url, resp.Status, doc.MayAct)
	}
	if err != nil {
		return LeaderDoc{}, err
	}
	return doc, nil
}
