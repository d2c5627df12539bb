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
	"github.com/lanleader/lanleader/jobs"
)

func TestWriteTable(t *testing.T) {
	doc := httpapi.StatusDoc{
		Node: "nas", Role: election.Leader, Term: 4,
		Leader:  election.LeaderInfo{ID: "nas", Addr: "192.168.1.5:7483", Term: 4},
		Since:   time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC),
		Time:    time.Date(2026, 11, 30, 19, 5, 3, 0, time.UTC),
		Ready:   true,
		Version: "v0.1.0",
		// The job runner's view, as jobs.JobStatus encodes it.
		Jobs: json.RawMessage(`[
			{"name":"nightly-backup","schedule":"0 2 * * *","next_run":"2026-12-01T02:00:00Z","running":0,
			 "last_run":{"job":"nightly-backup","run_id":"r1","scheduled_at":"2026-11-30T02:00:00Z","term":3,
			   "attempt":2,"outcome":"failed","exit_code":1,"started":"2026-11-30T02:00:00.2Z",
			   "error":"exit status 1","duration_seconds":90.4},
			 "ledger":{"instant":"2026-11-30T02:00:00Z","outcome":"failed","term":3},
			 "skipped":{"overlap":0,"refused":0,"misfired":1,"already_started":0}},
			{"name":"morning-digest","schedule":"30 6 * * *","next_run":"2026-12-01T06:30:00Z","running":1,
			 "ledger":{"instant":"2026-11-30T06:30:00Z","outcome":"ok","term":4},
			 "skipped":{"overlap":0,"refused":0,"misfired":0,"already_started":0}},
			{"name":"weekly","schedule":"0 7 * * 1","next_run":"2026-12-07T07:00:00Z","running":0,
			 "ledger":{"instant":"2026-11-30T19:00:00Z","outcome":"none","term":4},"skipped":{}},
			{"name":"hello","schedule":"@every 1m","next_run":"2026-11-30T19:06:00Z","running":0,
			 "last_run":{"scheduled_at":"2026-11-30T19:05:00Z","term":4,"attempt":1,"outcome":"ok",
			   "exit_code":0,"duration_seconds":0.0123},
			 "skipped":{}}
		]`),
		Extra: json.RawMessage(`{"leader_changes":2,"loss_estimate":0.01,"dropped":{"bad_mac":3},"peers":[
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
NAME            SCHEDULE    NEXT RUN                             LAST INSTANT          OUTCOME              EXIT  DURATION  TERM  SKIPPED     ERROR
nightly-backup  0 2 * * *   2026-12-01T02:00:00Z (in 6h54m57s)   2026-11-30T02:00:00Z  failed (2 attempts)  1     1m30s     3     misfired=1  exit status 1
morning-digest  30 6 * * *  2026-12-01T06:30:00Z (in 11h24m57s)  2026-11-30T06:30:00Z  running (1)          -     -         4     -           -
weekly          0 7 * * 1   2026-12-07T07:00:00Z (in 6d11h55m)   -                     -                    -     -         -     -           -
hello           @every 1m   2026-11-30T19:06:00Z (in 57s)        2026-11-30T19:05:00Z  ok                   0     12ms      4     -           -

DETAILS
LEADER_CHANGES   2
LOSS_ESTIMATE    0.01
DROPPED.BAD_MAC  3

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

// The job table reads the job runner's JSON by field name; this keeps the
// two in step: a real jobs.JobStatus must come out as a job row.
func TestWriteTableReadsRealJobStatus(t *testing.T) {
	st := []jobs.JobStatus{{
		Name: "backup", Schedule: "0 2 * * *", NextRun: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC),
		LastRun: &jobs.RunRecord{
			Job: "backup", ScheduledAt: time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC), Term: 7, Attempt: 1,
			Outcome: jobs.OutcomeOK, ExitCode: 0, Duration: 42 * time.Second,
		},
	}}
	raw, err := json.Marshal(st)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, httpapi.WriteTable(&out, httpapi.StatusDoc{Node: "nas", Jobs: raw}))
	assert.Regexp(t, `\nbackup +0 2 \* \* \* +2026-12-01T02:00:00Z +2026-11-30T02:00:00Z +ok +0 +42s +7 +-\n`, out.String())
}
