package httpapi_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/httpapi"
)

func TestWriteTable(t *testing.T) {
	doc := httpapi.StatusDoc{
		Node: "nas", Role: election.Leader, Term: 4,
		Leader:  election.LeaderInfo{ID: "nas", Addr: "192.168.1.5:7483", Term: 4},
		Since:   time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC),
		Time:    time.Date(2026, 11, 30, 19, 5, 3, 0, time.UTC),
		Ready:   true,
		Version: "v0.1.0",
		Jobs: json.RawMessage(`[
			{"name":"backup","schedule":"0 2 * * *","next_run":"2026-12-01T02:00:00.123Z",
			 "last_run":{"outcome":"ok","duration":"1m30s","exit_code":0}},
			{"name":"digest","schedule":"30 6 * * *","next_run":"2026-12-01T06:30:00Z","last_run":null}
		]`),
		Extra: json.RawMessage(`{"cluster":"home","peers":[
			{"id":"pi","addr":"192.168.1.7:7483","last_seen":"2026-11-30T19:05:02Z"}]}`),
	}
	var out bytes.Buffer
	require.NoError(t, httpapi.WriteTable(&out, doc))
	assert.Equal(t, `NODE     nas
ROLE     leader since 2026-11-30T19:00:00Z (5m3s)
TERM     4
LEADER   nas (this node) at 192.168.1.5:7483, term 4
READY    yes
VERSION  v0.1.0

JOBS
NAME    SCHEDULE    NEXT_RUN              LAST_RUN.OUTCOME  LAST_RUN.DURATION  LAST_RUN.EXIT_CODE
backup  0 2 * * *   2026-12-01T02:00:00Z  ok                1m30s              0
digest  30 6 * * *  2026-12-01T06:30:00Z  -                 -                  -

OTHER
CLUSTER  home

PEERS
ID  ADDR              LAST_SEEN
pi  192.168.1.7:7483  2026-11-30T19:05:02Z
`, out.String())
}

func TestWriteTableShapes(t *testing.T) {
	tests := []struct {
		name  string
		jobs  string
		extra string
		want  []string
	}{
		{name: "no jobs view", want: nil},
		{name: "empty job list", jobs: `[]`, want: []string{"JOBS\n(none)\n"}},
		{name: "jobs keyed by name", jobs: `{"backup":{"schedule":"@daily","running":true}}`,
			want: []string{"NAME    SCHEDULE  RUNNING\nbackup  @daily    yes\n"}},
		{name: "scalar list", jobs: `["a","b"]`, want: []string{"JOBS\na,b\n"}},
		{name: "newlines in values stay on one line", jobs: `[{"name":"x","error":"exit 1\nboom"}]`,
			want: []string{"x     exit 1 boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := httpapi.StatusDoc{Node: "a", Role: election.Follower}
			if tt.jobs != "" {
				doc.Jobs = json.RawMessage(tt.jobs)
			}
			var out bytes.Buffer
			require.NoError(t, httpapi.WriteTable(&out, doc))
			assert.Contains(t, out.String(), "LEADER  none known\n")
			assert.Contains(t, out.String(), "READY   no\n")
			if tt.want == nil {
				assert.NotContains(t, out.String(), "JOBS")
			}
			for _, w := range tt.want {
				assert.Contains(t, out.String(), w)
			}
		})
	}
}

func TestWriteTableBadView(t *testing.T) {
	var out bytes.Buffer
	err := httpapi.WriteTable(&out, httpapi.StatusDoc{Jobs: json.RawMessage(`{"a":`)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "jobs")
}
