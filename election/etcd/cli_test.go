package etcd_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/cli"
	"github.com/lanleader/lanleader/election/etcd"
	"github.com/lanleader/lanleader/election/etcd/etcdcli"
	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

// TestModeConfigErrors: bad election.etcd settings are refused before any
// network use (exit 3), each naming the file line and key, or the flag.
func TestModeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`election:
  mode: etcd
  etcd:
    endpoints: [ftp://etcd1:2379]
    session_ttl: 1s
jobs:
  - name: j
    schedule: "@every 1s"
    command: ["true"]
`), 0o600))
	var out, errb bytes.Buffer
	code := cli.Execute(context.Background(), []string{"check-config", file}, &out, &errb, etcdcli.Mode())
	assert.Equal(t, cli.ExitConfig, code, "stderr: %s", errb.String())
	assert.Contains(t, errb.String(), file+":4: election.etcd.endpoints (or --etcd-endpoints)")
	assert.Contains(t, errb.String(), `scheme "ftp"`)
	assert.Contains(t, errb.String(), file+":5: election.etcd.session_ttl (or --etcd-session-ttl): 1s: at least 2s")

	errb.Reset()
	code = cli.Execute(context.Background(), []string{"check-config", file, "--etcd-endpoints=http://127.0.0.1:1",
		"--etcd-session-ttl=2500ms"}, &out, &errb, etcdcli.Mode())
	assert.Equal(t, cli.ExitConfig, code)
	assert.NotContains(t, errb.String(), "endpoints", "the flag wins over the file")
	assert.Contains(t, errb.String(), "--etcd-session-ttl: 2.5s: etcd leases are whole seconds")

	unknown := filepath.Join(dir, "unknown.yaml")
	require.NoError(t, os.WriteFile(unknown, []byte("election:\n  mode: etcd\n  etcd:\n    endpoint: [http://e:2379]\n"), 0o600))
	errb.Reset()
	code = cli.Execute(context.Background(), []string{"check-config", unknown}, &out, &errb, etcdcli.Mode())
	assert.Equal(t, cli.ExitConfig, code)
	assert.Contains(t, errb.String(), unknown+":4")
	assert.Contains(t, errb.String(), "endpoint")
}

// TestRunModeRecordsBeforeStart runs two lanleader nodes in etcd mode
// (cli.Execute, as the lanleader-etcd binary does) with a job due every
// second whose process is this test binary: at its start it reads its own
// ledger entry from etcd. Leadership moves twice: once because the
// leader's lease is revoked, once by a graceful stop. Every run must find
// its entry recorded before it started, and no instant may run twice.
func TestRunModeRecordsBeforeStart(t *testing.T) {
	prefix := "/test/" + t.Name()
	cfg, out := jobConfig(t, prefix, fmt.Sprintf(`  - name: tick
    schedule: "* * * * * *"
    misfire: run-once
    command: [%%q, "-test.run=^$"]
    env:
      LANLEADER_ETCD_TEST_JOB_OUT: %%s
      LANLEADER_ETCD_ENDPOINT: %s
      LANLEADER_ETCD_PREFIX: %s
`, etcd.ServerEndpoint(), prefix))

	start := func(id string) *daemon { return startDaemon(t, cfg, id) }
	a := start("a")
	client, err := etcdtest.NewClient(etcd.ServerEndpoint())
	require.NoError(t, err)
	defer client.Close()
	waitRuns(t, out, func(rs []run) bool { return len(rs) >= 2 }, "a's first runs")
	b := start("b")

	// Revoke the leader's lease, as etcd would after a crash.
	resp, err := client.Get(context.Background(), prefix+"/election/", clientv3.WithFirstCreate()...)
	require.NoError(t, err)
	require.NotEmpty(t, resp.Kvs)
	first := string(resp.Kvs[0].Value)
	_, err = client.Revoke(context.Background(), clientv3.LeaseID(resp.Kvs[0].Lease))
	require.NoError(t, err)
	rs := waitRuns(t, out, func(rs []run) bool { return countBy(rs, other(first)) >= 2 }, "runs of the next leader")

	// A graceful stop hands over to the other node at once.
	second := rs[len(rs)-1].node
	procs := map[string]*daemon{"a": a, "b": b}
	procs[second].cancel()
	require.Equal(t, cli.ExitOK, <-procs[second].done)
	procs[second].done <- cli.ExitOK // for the cleanup
	n := len(rs)
	rs = waitRuns(t, out, func(rs []run) bool {
		return len(rs) >= n+2 && countBy(rs[n:], other(second)) >= 2
	}, "runs after the graceful handover")

	seen := map[string]run{}
	var lastTerm uint64
	for _, r := range rs {
		assert.Equal(t, "recorded", r.verdict, "run %+v did not find its ledger entry in etcd at its start", r)
		if prev, dup := seen[r.instant]; dup {
			t.Errorf("instant %s ran twice: %+v and %+v", r.instant, prev, r)
		}
		seen[r.instant] = r
		assert.GreaterOrEqual(t, r.term, lastTerm, "terms only grow: %+v", r)
		lastTerm = r.term
	}
	nodes := map[string]bool{}
	for _, r := range rs {
		nodes[r.node] = true
	}
	assert.Len(t, nodes, 2, "both nodes ran the job at some point")
	if t.Failed() {
		t.Logf("a:\n%s\nb:\n%s", a.log.String(), b.log.String())
	}
}

// jobConfig writes the config file of two-node etcd mode tests: session
// TTL 2 s under prefix, and jobs, whose YAML has a %q for the job's
// program (this test binary, as the job helper) and a %s for the job
// helper's output file. It returns the file and the output file.
func jobConfig(t *testing.T, prefix, jobs string) (cfg, out string) {
	dir := t.TempDir()
	out = filepath.Join(dir, "runs")
	self, err := os.Executable()
	require.NoError(t, err)
	cfg = filepath.Join(dir, "lanleader.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`election:
  mode: etcd
  http: ""
  etcd:
    endpoints: [%s]
    prefix: %s
    session_ttl: 2s
jobs:
`, etcd.ServerEndpoint(), prefix)+fmt.Sprintf(jobs, self, out)), 0o600))
	return cfg, out
}

// daemon is one `lanleader run` in etcd mode, in this process.
type daemon struct {
	cancel context.CancelFunc
	done   chan int
	log    *syncBuffer
}

// startDaemon runs `lanleader run` with config file cfg as node id (cli.Execute,
// as the lanleader-etcd binary does) until the test ends, when it must
// exit 0.
func startDaemon(t *testing.T, cfg, id string) *daemon {
	ctx, cancel := context.WithCancel(context.Background())
	p := &daemon{cancel: cancel, done: make(chan int, 1), log: &syncBuffer{}}
	go func() {
		p.done <- cli.Execute(ctx, []string{"run", "--config", cfg, "--node-id", id, "--log-level", "debug"},
			p.log, p.log, etcdcli.Mode())
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-p.done; code != cli.ExitOK {
			t.Errorf("%s exited %d; log:\n%s", id, code, p.log.String())
		}
	})
	return p
}

// run is one line of the job helper's output.
type run struct {
	instant, node, verdict string
	term                   uint64
}

func readRuns(t *testing.T, file string) []run {
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var rs []run
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 4, "line %q", line)
		term, err := strconv.ParseUint(f[2], 10, 64)
		require.NoError(t, err)
		rs = append(rs, run{instant: f[0], node: f[1], term: term, verdict: f[3]})
	}
	return rs
}

// waitRuns waits until cond holds on the runs so far.
func waitRuns(t *testing.T, file string, cond func([]run) bool, what string) []run {
	t.Helper()
	var rs []run
	require.Eventually(t, func() bool {
		rs = readRuns(t, file)
		return cond(rs)
	}, 20*time.Second, 50*time.Millisecond, "waiting for %s; runs: %+v", what, rs)
	return rs
}

func other(node string) func(run) bool { return func(r run) bool { return r.node != node } }

func countBy(rs []run, f func(run) bool) int {
	n := 0
	for _, r := range rs {
		if f(r) {
			n++
		}
	}
	return n
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
