package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/hooks"
	"github.com/lanleader/lanleader/jobs"
)

const full = `
election:
  mode: udp
  node_id: nas
  leader: nas.local
  env_var: LEAD
  cluster: home
  bind: '{{ GetPrivateIP }}'
  port: 7946
  peers: [10.0.0.2, 10.0.0.3]
  priority: 0
  interval: 200ms
  misses: 5
  preempt: false
  secret_file: /etc/lanleader/key
  http: ""
jobs:
  - name: backup
    schedule: "0 2 * * *"
    command: [/usr/local/bin/backup, --all]
    dir: /srv
    env: {A: "1", B: two}
    timeout: 1h
    overlap: allow
    retries: 2
    retry_delay: 30s
    on_leader_loss: finish
    misfire: skip
    misfire_grace: 10m
    rerun_interrupted: true
    kill_grace: 5s
  - name: tick
    schedule: "CRON_TZ=Europe/Paris */5 * * * * *"
    shell: echo "$LANLEADER_JOB"
hooks:
  on_leader: logger "I lead term $LANLEADER_TERM"
  on_follower: [/usr/bin/true]
  timeout: 5s
`

func TestParseFull(t *testing.T) {
	f, err := Parse("full.yaml", []byte(full))
	require.NoError(t, err)
	e := f.Election
	assert.Equal(t, "udp", e.Mode)
	assert.Equal(t, "nas", e.NodeID)
	assert.Equal(t, "nas.local", e.Leader)
	assert.Equal(t, "LEAD", e.EnvVar)
	assert.Equal(t, "home", e.Cluster)
	assert.Equal(t, "{{ GetPrivateIP }}", e.Bind)
	assert.Equal(t, 7946, e.Port)
	assert.Equal(t, []string{"10.0.0.2", "10.0.0.3"}, e.Peers)
	require.NotNil(t, e.Priority)
	assert.Equal(t, 0, *e.Priority)
	assert.Equal(t, 200*time.Millisecond, e.Interval)
	assert.Equal(t, 5, e.Misses)
	require.NotNil(t, e.Preempt)
	assert.False(t, *e.Preempt)
	assert.Equal(t, "/etc/lanleader/key", e.SecretFile)
	require.NotNil(t, e.HTTP, "explicit empty http means off, not unset")
	assert.Equal(t, "", *e.HTTP)

	require.Len(t, f.Jobs, 2)
	assert.Equal(t, jobs.Spec{
		Name: "backup", Schedule: "0 2 * * *", Command: []string{"/usr/local/bin/backup", "--all"},
		Dir: "/srv", Env: map[string]string{"A": "1", "B": "two"}, Timeout: time.Hour,
		Overlap: jobs.OverlapAllow, Retries: 2, RetryDelay: 30 * time.Second,
		OnLeaderLoss: jobs.LeaderLossFinish, Misfire: jobs.MisfireSkip, MisfireGrace: 10 * time.Minute,
		RerunInterrupted: true, KillGrace: 5 * time.Second,
	}, f.Jobs[0])
	assert.Equal(t, `echo "$LANLEADER_JOB"`, f.Jobs[1].Shell)
	assert.Equal(t, jobs.OverlapSkip, f.Jobs[1].Overlap)
	assert.Equal(t, jobs.LeaderLossCancel, f.Jobs[1].OnLeaderLoss)
	assert.Equal(t, jobs.MisfireRunOnce, f.Jobs[1].Misfire)

	assert.Equal(t, hooks.Config{
		OnLeader:   hooks.Command{Shell: `logger "I lead term $LANLEADER_TERM"`},
		OnFollower: hooks.Command{Argv: []string{"/usr/bin/true"}},
		Timeout:    5 * time.Second,
	}, f.Hooks)

	assert.Equal(t, "full.yaml:11", f.Where("election.priority"))
	assert.Equal(t, "full.yaml:19", f.Where("jobs[0].schedule"))
	assert.Equal(t, "full.yaml", f.Where("election.nothing"))
}

func TestParseUnsetElectionPointers(t *testing.T) {
	f, err := Parse("x.yaml", []byte("election:\n  mode: static\n"))
	require.NoError(t, err)
	assert.Nil(t, f.Election.Priority)
	assert.Nil(t, f.Election.Preempt)
	assert.Nil(t, f.Election.HTTP)
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", "\n# nothing\n", "jobs: []\n", "jobs:\n", "{}\n"} {
		f, err := Parse("e.yaml", []byte(in))
		require.NoError(t, err, "%q", in)
		assert.Empty(t, f.Jobs)
	}
}

func TestParseErrors(t *testing.T) {
	job := func(body string) string {
		return "jobs:\n  - name: a\n    schedule: '* * * * *'\n    shell: 'true'\n" + body
	}
	tests := []struct {
		name string
		in   string
		want []string // each must appear in the error
	}{
		{"bad schedule", job("  - name: b\n    schedule: '61 * * * *'\n    shell: x\n"),
			[]string{`d.yaml:6: jobs[1].schedule: "61 * * * *": minute field "61": end of range (61) above maximum (59)`}},
		{"unknown top key", "jobz: []\n", []string{`d.yaml:1: jobz: unknown key (did you mean "jobs"?)`}},
		{"unknown job key", job("    shedule: x\n"), []string{`d.yaml:5: jobs[0].shedule: unknown key (did you mean "schedule"?)`}},
		{"unknown election key", "election:\n  moed: udp\n", []string{`d.yaml:2: election.moed: unknown key (did you mean "mode"?)`}},
		{"duplicate name", job("  - name: a\n    schedule: '@daily'\n    shell: x\n"),
			[]string{`d.yaml:5: jobs[1].name: "a" already used by jobs[0] (line 2)`}},
		{"missing command", "jobs:\n  - name: a\n    schedule: '@daily'\n",
			[]string{`d.yaml:2: jobs[0].command: one of command (argv list), shell (string) or http (a request) is required`}},
		{"both command and shell", job("    command: [ls]\n"), []string{`d.yaml:4: jobs[0].shell: command and shell are mutually exclusive`}},
		{"missing name", "jobs:\n  - schedule: '@daily'\n    shell: x\n", []string{`d.yaml:2: jobs[0].name: required`}},
		{"missing schedule", "jobs:\n  - name: a\n    shell: x\n", []string{`d.yaml:2: jobs[0].schedule: required`}},
		{"bad duration", job("    timeout: soon\n"), []string{`d.yaml:5: jobs[0].timeout: "soon": not a duration`}},
		{"negative duration", job("    retry_delay: -1s\n"), []string{`d.yaml:5: jobs[0].retry_delay: "-1s": must not be negative`}},
		{"bad overlap", job("    overlap: queue\n"), []string{`d.yaml:5: jobs[0].overlap: "queue" is not one of [skip allow]`}},
		{"bad misfire", job("    misfire: always\n"), []string{`d.yaml:5: jobs[0].misfire: "always" is not one of [run-once skip]`}},
		{"bad on_leader_loss", job("    on_leader_loss: x\n"), []string{`jobs[0].on_leader_loss: "x" is not one of [cancel finish]`}},
		{"retries not int", job("    retries: many\n"), []string{`d.yaml:5: jobs[0].retries: expected an integer, found "many"`}},
		{"negative retries", job("    retries: -1\n"), []string{`d.yaml:5: jobs[0].retries: -1 is negative`}},
		{"bool not bool", job("    rerun_interrupted: yes\n"), []string{`jobs[0].rerun_interrupted: expected true or false, found "yes"`}},
		{"command not list", job("    command: ls -l\n"), []string{`d.yaml:5: jobs[0].command: expected a list of strings, found "ls -l"`}},
		{"empty command", "jobs:\n  - name: a\n    schedule: '@daily'\n    command: []\n", []string{`d.yaml:4: jobs[0].command: empty list`}},
		{"env not map", job("    env: [A]\n"), []string{`d.yaml:5: jobs[0].env: expected a mapping`}},
		{"jobs not list", "jobs: {a: 1}\n", []string{`d.yaml:1: jobs: expected a list of jobs, found a mapping`}},
		{"job not mapping", "jobs: [x]\n", []string{`d.yaml:1: jobs[0]: expected a mapping`}},
		{"duplicate key", job("    name: b\n"), []string{`d.yaml:5: jobs[0].name: duplicate key (first at line 2)`}},
		{"syntax", "jobs:\n  - name: a\n   bad: [\n", []string{`d.yaml:`}},
		{"two documents", "jobs: []\n---\njobs: []\n", []string{`only one YAML document`}},
		{"port range", "election:\n  port: 70000\n", []string{`d.yaml:2: election.port: 70000 is not a port`}},
		{"interval", "election:\n  interval: 1\n", []string{`d.yaml:2: election.interval: "1": not a duration`}},
		{"peers not list", "election:\n  peers: a,b\n", []string{`d.yaml:2: election.peers: expected a list of strings`}},
		{"hook type", "hooks:\n  on_leader: {a: b}\n", []string{`d.yaml:2: hooks.on_leader: expected a shell string or an argv list`}},
		{"hook timeout", "hooks:\n  timeout: x\n", []string{`d.yaml:2: hooks.timeout: "x": not a duration`}},
		{"tz without schedule", job("  - name: b\n    schedule: 'TZ=UTC'\n    shell: x\n"), []string{`d.yaml:6: jobs[1].schedule: "TZ=UTC"`}},
		{"bad tz", job("  - name: b\n    schedule: 'CRON_TZ=Nowhere/City * * * * *'\n    shell: x\n"), []string{`d.yaml:6: jobs[1].schedule:`, `Nowhere/City`}},
		{"never fires", job("  - name: b\n    schedule: '0 0 30 2 *'\n    shell: x\n"), []string{`d.yaml:6: jobs[1].schedule: "0 0 30 2 *": never fires`}},
		{"every below a second", job("  - name: b\n    schedule: '@every 0s'\n    shell: x\n"), []string{`d.yaml:6: jobs[1].schedule: "@every 0s": @every 0s: below the 1s minimum`}},
		{"every not whole seconds", job("  - name: b\n    schedule: '@every 1500ms'\n    shell: x\n"), []string{`d.yaml:6: jobs[1].schedule: "@every 1500ms": @every 1500ms: not whole seconds (use 1s or 2s)`}},
		{"day of week 8", job("  - name: b\n    schedule: '0 0 * * 8'\n    shell: x\n"), []string{`d.yaml:6: jobs[1].schedule: "0 0 * * 8": day-of-week field "8": end of range (8) above maximum (7, Sunday like 0)`}},
		{"not a mapping", "hello\n", []string{`d.yaml:1: expected a mapping of election, jobs, services, hooks, log, found "hello"`}},
		{"several at once", job("    timeout: x\n    retries: y\n"), []string{`d.yaml:5: jobs[0].timeout`, `d.yaml:6: jobs[0].retries`}},
		// A job with a problem of its own is still checked for a duplicate
		// name, whichever of the two comes first.
		{"duplicate name beside a missing command", job("  - name: a\n    schedule: '@daily'\n"),
			[]string{`d.yaml:5: jobs[1].name: "a" already used by jobs[0] (line 2)`, `d.yaml:5: jobs[1].command: one of command`}},
		{"missing command beside a duplicate name", "jobs:\n  - name: a\n    schedule: '@daily'\n" + job("")[len("jobs:\n"):],
			[]string{`d.yaml:2: jobs[0].command: one of command`, `d.yaml:4: jobs[1].name: "a" already used by jobs[0] (line 2)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("d.yaml", []byte(tt.in))
			require.Error(t, err)
			assert.Nil(t, f)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "demo.yaml")
	require.NoError(t, os.WriteFile(p, []byte("jobs:\n  - name: a\n    schedule: '@every 2s'\n    shell: 'true'\n  - name: b\n    schedule: '61 * * * *'\n    shell: x\n"), 0o600))
	_, err := Load(p)
	require.Error(t, err)
	assert.Equal(t, p+`:6: jobs[1].schedule: "61 * * * *": minute field "61": end of range (61) above maximum (59)`, err.Error())

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.yaml")
}

func TestTooManyErrorsSummarised(t *testing.T) {
	var b strings.Builder
	b.WriteString("jobs:\n")
	for range 30 {
		b.WriteString("  - bogus: 1\n")
	}
	_, err := Parse("m.yaml", []byte(b.String()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more problems")
	assert.LessOrEqual(t, strings.Count(err.Error(), "\n"), maxErrors+1)
}

func TestExampleDemoLoads(t *testing.T) {
	f, err := Load("../examples/demo.yaml")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("examples/demo.yaml not written yet")
	}
	require.NoError(t, err)
	assert.NotEmpty(t, f.Jobs)
}

func TestClusterSizeIsDecoded(t *testing.T) {
	f, err := Parse("q.yaml", []byte("election:\n  mode: udp\n  cluster_size: 5\n"))
	require.NoError(t, err)
	assert.Equal(t, 5, f.Election.ClusterSize)
	_, err = Parse("q.yaml", []byte("election:\n  cluster_size: many\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "q.yaml:2")
	assert.Contains(t, err.Error(), "election.cluster_size")
}

// TestSyntaxErrorLine: yaml reports some errors at the line where the
// enclosing block began; the error names the line that breaks the file.
func TestSyntaxErrorLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"jobs:\n  - name: a\n    schedule: \"@every 1s\"\n    shell: echo\n  bad: : x\n", "y.yaml:5: "},
		{"jobs:\n  - name: a\n    schedule: \"@every 1s\"\n    shell: echo\n   dir: x\n", "y.yaml:5: "},
		{"jobs:\n  - name: a\n    schedule: \"@every 1s\"\n    shell: echo\n\tdir: x\n", "y.yaml:5: "},
		{"jobs:\n  - name: a\n    dir: \"open\n    shell: echo\n", "y.yaml:3: "},
	} {
		_, err := Parse("y.yaml", []byte(tt.in))
		require.Error(t, err, tt.in)
		assert.True(t, strings.HasPrefix(err.Error(), tt.want), "%q: got %v", tt.in, err)
	}
}
