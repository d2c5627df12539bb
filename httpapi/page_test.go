package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
)

// The page without a browser: what it says, its headers, its parameters.
func TestStatusPageHTML(t *testing.T) {
	changes := httpapi.NewChangeLog("nas")
	el := newFake(t, changes.Callbacks())
	h := httpapi.New(httpapi.Config{
		Elector: el, JobViews: sampleJobs, Changes: changes, Version: "v1.2.3",
		Nodes: func() []httpapi.NodeView {
			return []httpapi.NodeView{{ID: "pi", Addr: "198.18.0.2:7483", Role: "follower", Ago: 2 * time.Second,
				Clock: &httpapi.ClockView{Offset: 5002 * time.Millisecond, Over: true}},
				{ID: "mini", Role: "rival leader", Ago: time.Second, Clock: &httpapi.ClockView{Offset: -3 * time.Millisecond}}}
		},
		Quorum: func() httpapi.QuorumView { return httpapi.QuorumView{Size: 3, Majority: 2, Heard: 3} },
	}).Handler()
	el.n.Update(election.Status{Node: "nas", Role: election.Follower, Term: 4, Leader: election.LeaderInfo{ID: "pi", Addr: "198.18.0.2:7483", Term: 4}})
	el.n.Update(election.Status{Node: "nas", Role: election.Follower, Term: 4})
	el.n.Update(election.Status{Node: "nas", Role: election.Leader, Term: 9, Leader: election.LeaderInfo{ID: "nas", Term: 9}})

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'none'", "no external assets, no scripts")
	body := rec.Body.String()
	assert.Contains(t, body, `<meta http-equiv="refresh" content="5">`)
	assert.Contains(t, body, `name="viewport"`, "readable on a phone")
	assert.NotContains(t, body, "<script")
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, body, "nothing loaded from elsewhere")
	for _, want := range []string{
		`<b id="role">leader</b>`, "<b>nas</b>", "majority 2 of 3", "held",
		"198.18.0.2:7483", "rival leader", "2s ago",
		`<td class="bad">&#43;5.002s (off: NTP?)</td>`, "<td>-3ms</td>", // each node's clock offset
		`id="job-backup"`, "0 2 * * *", "a1b2c3d4e5f60718", "exit status 3", "manual", "scheduled (heard)",
		"this node (nas) took over from pi after an election (term 4 → 9)",
		"pi is no longer heard leading (term 4)",
		"lanleader v1.2.3",
	} {
		assert.Contains(t, body, want)
	}
	// The leader's own entry is listed once, as this node.
	assert.Equal(t, 1, strings.Count(body, "(this node)"))

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?refresh=30", nil))
	assert.Contains(t, rec.Body.String(), `content="30"`)
	for _, bad := range []string{"0", "x", "3601"} {
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?refresh="+bad, nil))
		assert.Equal(t, http.StatusBadRequest, rec.Code, bad)
	}
}

// Names are escaped: a job or node name cannot inject markup.
func TestStatusPageEscapes(t *testing.T) {
	el := newFake(t, election.Callbacks{})
	h := httpapi.New(httpapi.Config{Elector: el, Nodes: func() []httpapi.NodeView {
		return []httpapi.NodeView{{ID: `<img src=x onerror=alert(1)>`, Role: "follower"}}
	}}).Handler()
	code, body := get(t, h, "/")
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, body, "<img")
	assert.Contains(t, body, "&lt;img")
	assert.Contains(t, body, "No jobs configured.")
	assert.Contains(t, body, "None since this node started.")
	assert.Contains(t, body, "<b>n/a</b>", "no quorum state without a Quorum func (static, env)")
}

// The page states the guarantee in force — the line the node logged at
// start — and a witness as a witness: its own role, a witness among the
// nodes, and how many of the voters heard are witnesses.
func TestStatusPageGuaranteeAndWitness(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    httpapi.QuorumView
		want []string
	}{
		{"no quorum", httpapi.QuorumView{Guarantee: "no quorum: 2 voters (peers: this node and 1 listed); a partition runs jobs on both sides until it heals"},
			[]string{`<b class="bad">off</b>`, `<span id="guarantee">no quorum: 2 voters (peers: this node and 1 listed); a partition runs jobs on both sides until it heals</span>`}},
		{"witness", httpapi.QuorumView{Size: 3, Majority: 2, Heard: 3, Witnesses: 1, Witness: true, Guarantee: "quorum: 3 voters (cluster_size), this node a witness"},
			[]string{`<b id="role">witness</b>`, "3 heard (1 witness)", `<span id="guarantee">quorum: 3 voters (cluster_size), this node a witness</span>`,
				`<td class="">witness</td>`, `<td class="">witness</td><td><code>198.18.0.3:7483</code>`}},
	} {
		el := newFake(t, election.Callbacks{})
		h := httpapi.New(httpapi.Config{Elector: el, Quorum: func() httpapi.QuorumView { return tc.q },
			Nodes: func() []httpapi.NodeView {
				return []httpapi.NodeView{{ID: "pi", Addr: "198.18.0.3:7483", Role: "witness", Ago: time.Second}}
			}}).Handler()
		el.n.Update(election.Status{Node: "nas", Role: election.Follower, Term: 4})
		code, body := get(t, h, "/")
		require.Equal(t, http.StatusOK, code)
		for _, want := range tc.want {
			assert.Contains(t, body, want, tc.name)
		}
	}
}
