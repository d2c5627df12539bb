package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
)

// leaderRoles are the standings /leader, /status and is-leader must agree
// on: every role, a leader that may not act, and a step-down between the
// two reads (may act asked first, then the status says follower).
func leaderRoles() []struct {
	Name   string
	Status election.Status
	MayAct bool
	Want   bool   // may act: 200
	Reason string // part of the 503's reason
} {
	since := time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)
	return []struct {
		Name   string
		Status election.Status
		MayAct bool
		Want   bool
		Reason string
	}{
		{"leader that may act", election.Status{Node: "nas", Role: election.Leader, Term: 7, Since: since,
			Leader: election.LeaderInfo{ID: "nas", Addr: "192.168.1.5:7483", Term: 7}}, true, true, ""},
		{"leader that may not act (lease lost, paused, stopping)", election.Status{Node: "nas", Role: election.Leader, Term: 7, Since: since,
			Leader: election.LeaderInfo{ID: "nas", Term: 7}}, false, false, "leads term 7 but may not act now"},
		{"follower of pi", election.Status{Node: "nas", Role: election.Follower, Term: 8, Since: since,
			Leader: election.LeaderInfo{ID: "pi", Addr: "192.168.1.7:7483", Term: 8}}, false, false, "follower; pi leads term 8"},
		{"follower, no leader known", election.Status{Node: "nas", Role: election.Follower, Term: 8}, false, false, "follower; no leader known"},
		{"candidate", election.Status{Node: "nas", Role: election.Candidate, Term: 9, Since: since}, false, false, "candidate; no leader known"},
		{"stepped down between the reads", election.Status{Node: "nas", Role: election.Follower, Term: 9, Since: since,
			Leader: election.LeaderInfo{ID: "pi", Term: 9}}, true, false, "follower; pi leads term 9"},
	}
}

// TestLeaderAgreesWithStatusInEveryRole: /leader answers 200 exactly when
// this node leads and the may-act predicate says yes, and /status's
// may_act and the status page say the same.
func TestLeaderAgreesWithStatusInEveryRole(t *testing.T) {
	for _, tc := range leaderRoles() {
		t.Run(tc.Name, func(t *testing.T) {
			h := httpapi.New(httpapi.Config{Elector: reporting(t, tc.Status), MayAct: func() bool { return tc.MayAct }}).Handler()
			code, body := get(t, h, "/leader")
			var doc httpapi.LeaderDoc
			require.NoError(t, json.Unmarshal([]byte(body), &doc), body)
			if tc.Want {
				assert.Equal(t, http.StatusOK, code, body)
				assert.Empty(t, doc.Reason)
			} else {
				assert.Equal(t, http.StatusServiceUnavailable, code, body)
				assert.Contains(t, doc.Reason, tc.Reason)
			}
			assert.Equal(t, tc.Want, doc.MayAct)
			assert.Equal(t, tc.Status.Role, doc.Role)
			assert.Equal(t, tc.Status.Leader, doc.Leader)
			assert.Equal(t, tc.Status.Node, doc.Node)
			assert.True(t, tc.Status.Since.Equal(doc.Since))
			assert.Equal(t, tc.Want, *statusDoc(t, h).MayAct, "/status's may_act")
			_, page := get(t, h, "/")
			assert.Equal(t, tc.Status.IsLeader() && !tc.Want, strings.Contains(page, `id="may-act"`), "the page marks a leader that may not act")
		})
	}
}

// TestLeaderTermIsTheLeadershipsTerm: a leader answers with the term its
// runs get as LANLEADER_TERM, not a higher one it has seen since.
func TestLeaderTermIsTheLeadershipsTerm(t *testing.T) {
	s := election.Status{Node: "nas", Role: election.Leader, Term: 12, Leader: election.LeaderInfo{ID: "nas", Term: 11}}
	h := httpapi.New(httpapi.Config{Elector: reporting(t, s), MayAct: func() bool { return true }}).Handler()
	_, body := get(t, h, "/leader")
	assert.JSONEq(t, `{"node":"nas","role":"leader","term":11,"may_act":true,"leader":{"id":"nas","term":11}}`, body)
}

// TestLeaderWithoutMayActFollowsTheRole: a server given no predicate (a
// library user's) answers from the role alone.
func TestLeaderWithoutMayActFollowsTheRole(t *testing.T) {
	for _, role := range []election.Role{election.Follower, election.Candidate, election.Leader} {
		h := httpapi.New(httpapi.Config{Elector: reporting(t, election.Status{Node: "n", Role: role,
			Leader: election.LeaderInfo{ID: "n", Term: 1}})}).Handler()
		code, _ := get(t, h, "/leader")
		assert.Equal(t, role == election.Leader, code == http.StatusOK, role.String())
	}
}

// reporting is a fake elector that has reported s.
func reporting(t *testing.T, s election.Status) *fakeElector {
	el := newFake(t, election.Callbacks{})
	el.n.Update(s)
	return el
}

// TestTableSaysWhenALeaderMayNotAct: `lanleader status` marks a leader
// that may not act, and nothing else: not one that may, and not a document
// from an older server without may_act.
func TestTableSaysWhenALeaderMayNotAct(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		mayAct *bool
		want   bool
	}{{&no, true}, {&yes, false}, {nil, false}} {
		var b strings.Builder
		require.NoError(t, httpapi.WriteTable(&b, httpapi.StatusDoc{Node: "nas", Role: election.Leader, MayAct: tc.mayAct,
			Leader: election.LeaderInfo{ID: "nas", Term: 4}}))
		assert.Equal(t, tc.want, strings.Contains(b.String(), "may not act now"), b.String())
	}
}
