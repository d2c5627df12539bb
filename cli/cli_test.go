package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCLI runs the command in-process and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Execute(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		// stderr must contain each of these.
		want []string
	}{
		{"no args", nil, ExitUsage, []string{"Available Commands:", "a command is required"}},
		{"unknown command", []string{"frobnicate"}, ExitUsage, []string{`unknown command "frobnicate"`}},
		{"misspelt command", []string{"stauts"}, ExitUsage, []string{`unknown command "stauts" (did you mean "status"?)`}},
		{"bad flag", []string{"run", "--bogus"}, ExitUsage, []string{"-bogus"}},
		{"extra argument", []string{"version", "extra"}, ExitUsage, []string{`unexpected argument "extra"`}},
		{"default config missing", []string{"run", "--mode=static", "--leader", "a"}, ExitConfig,
			[]string{"open " + DefaultConfigPath + ": no such file", "give the file with --config"}},
		{"check-config two files", []string{"check-config", "a.yaml", "b.yaml"}, ExitUsage, []string{"want at most one config FILE"}},
		{"check-config file twice", []string{"check-config", "a.yaml", "--config", "b.yaml"}, ExitUsage, []string{"as FILE or as --config, not both"}},
		{"config file missing", []string{"run", "--config", "testdata/nope.yaml"}, ExitConfig, []string{"open testdata/nope.yaml: no such file"}},
		{"unknown key", []string{"run", "--config", "testdata/unknown_key.yaml"}, ExitConfig,
			[]string{"testdata/unknown_key.yaml:5:", "jobs[0].retrys", "unknown key"}},
		{"bad schedule", []string{"run", "--config", "testdata/bad_schedule.yaml"}, ExitConfig,
			[]string{"testdata/bad_schedule.yaml:6:", "jobs[1].schedule", `"61 * * * *"`}},
		{"check-config unknown key", []string{"check-config", "testdata/unknown_key.yaml"}, ExitConfig,
			[]string{"testdata/unknown_key.yaml:5:", "jobs[0].retrys"}},
		{"bad --mode", []string{"run", "--config", "testdata/good.yaml", "--mode=bogus"}, ExitConfig,
			[]string{"--mode", `"bogus"`, "want static, env or udp"}},
		{"bad --priority", []string{"run", "--config", "testdata/good.yaml", "--priority", "300"}, ExitConfig,
			[]string{"--priority", "300", "want 0-255"}},
		{"bad --transport", []string{"run", "--config", "testdata/good.yaml", "--transport", "anycast"}, ExitConfig,
			[]string{"--transport", `"anycast"`, "want broadcast, multicast or unicast"}},
		{"--transport multicast with --peers", []string{"run", "--config", "testdata/good.yaml", "--transport", "multicast", "--peers", "198.18.0.2"}, ExitConfig,
			[]string{"--transport", "peers are listed but transport is multicast"}},
		{"--transport unicast without --peers", []string{"run", "--config", "testdata/good.yaml", "--transport", "unicast"}, ExitConfig,
			[]string{"--transport", "needs peers"}},
		{"bad priority in file", []string{"run", "--config", "testdata/bad_priority.yaml"}, ExitConfig,
			[]string{"testdata/bad_priority.yaml:3:", "election.priority", "(or --priority)", "want 0-255"}},
		{"static without --leader", []string{"run", "--config", "testdata/good.yaml", "--mode=static"}, ExitConfig,
			[]string{"leader", "required in static mode"}},
		{"bad --log-format", []string{"run", "--config", "testdata/good.yaml", "--mode=static", "--leader", "a", "--log-format", "xml"}, ExitConfig,
			[]string{"--log-format", `"xml"`}},
		{"zero values are errors, all at once", []string{"check-config", "testdata/zero_values.yaml"}, ExitConfig, []string{
			"testdata/zero_values.yaml:8: jobs[0].schedule",
			"testdata/zero_values.yaml:3: election.port (or --port): 0: want 1-65535",
			"testdata/zero_values.yaml:4: election.interval (or --interval): 0s: must be positive",
			"testdata/zero_values.yaml:5: election.misses (or --misses): 0: want at least 2"}},
		{"run refuses what check-config refuses", []string{"run", "--config", "testdata/zero_values.yaml"}, ExitConfig, []string{
			"testdata/zero_values.yaml:3: election.port"}},
		{"bad election settings, all at once", []string{"check-config", "testdata/bad_election.yaml"}, ExitConfig, []string{
			"testdata/bad_election.yaml:3: election.misses (or --misses): 1: want at least 2",
			`testdata/bad_election.yaml:4: election.peers (or --peers): "a b c": want host:port`,
			`"10.0.0.1:99999": port "99999": want 1-65535`,
			`testdata/bad_election.yaml:5: election.http (or --http): "notanaddr": want host:port`,
			"testdata/bad_election.yaml:6: election.secret_file (or --secret-file): key file: open testdata/no-such.key: no such file"}},
		{"bad --peers flag", []string{"run", "--config", "testdata/good.yaml", "--peers", "10.0.0.1:0"}, ExitConfig,
			[]string{`--peers: "10.0.0.1:0": port "0": want 1-65535`}},
		{"bad --http flag", []string{"run", "--config", "testdata/good.yaml", "--http", "localhost"}, ExitConfig,
			[]string{`--http: "localhost": want host:port`}},
		{"cluster name over the wire's limit", []string{"check-config", "testdata/good.yaml", "--cluster", strings.Repeat("c", 300)}, ExitConfig,
			[]string{"--cluster: \"ccc", "\": 300 bytes, at most 64"}},
		{"invalid YAML at its line", []string{"check-config", "testdata/bad_yaml.yaml"}, ExitConfig,
			[]string{"testdata/bad_yaml.yaml:6: "}},
		{"bind resolving to two addresses", []string{"run", "--config", "testdata/good.yaml", "--bind", `{{ "198.18.0.1 198.18.0.2" }}`}, ExitConfig,
			[]string{"--bind", "resolved to 2 addresses (198.18.0.1, 198.18.0.2)"}},
		{"demo with one node", []string{"demo", "--nodes", "1"}, ExitConfig, []string{"--nodes 1"}},
		{"demo bad flag", []string{"demo", "--kill", "1s"}, ExitUsage, []string{"-kill"}},
		{"demo kill-every too short", []string{"demo", "--kill-every", "100ms"}, ExitConfig, []string{"--kill-every 100ms"}},
		{"demo ports past 65535", []string{"demo", "--base-port", "65534"}, ExitConfig, []string{"--base-port 65534"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			for _, w := range tt.want {
				assert.Contains(t, stderr, w)
			}
			assert.NotContains(t, stderr, "panic")
			assert.NotRegexp(t, `(^|\s)(config|wire|protocol|udp|jobs): `, stderr, "errors name flags and keys, not packages")
		})
	}
}

// previewRuns runs check-config and returns each job's printed instants.
func previewRuns(t *testing.T, args ...string) map[string][]time.Time {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"check-config"}, args...)...)
	require.Equal(t, ExitOK, code, stderr)
	next := map[string][]time.Time{}
	job := regexp.MustCompile(`^  (\S+): ".*" \(.*\), next \d+ after .*:$`)
	var cur string
	for _, l := range strings.Split(stdout, "\n") {
		if m := job.FindStringSubmatch(l); m != nil {
			cur = m[1]
			continue
		}
		if s, ok := strings.CutPrefix(l, "    "); ok {
			at, err := time.Parse(time.RFC3339, s)
			require.NoError(t, err, "line %q", l)
			next[cur] = append(next[cur], at)
		}
	}
	return next
}

func TestCheckConfigPrintsNextThreeRuns(t *testing.T) {
	code, stdout, stderr := runCLI(t, "check-config", "testdata/good.yaml")
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, "testdata/good.yaml: ok (mode udp, 2 jobs)")

	next := previewRuns(t, "testdata/good.yaml")
	require.Len(t, next["five"], 3, stdout)
	require.Len(t, next["nightly"], 3, stdout)
	for i, at := range next["five"] {
		assert.Zero(t, at.Second()%5, "five: %v not on a multiple of 5 s", at)
		if i > 0 {
			assert.Equal(t, 5*time.Second, at.Sub(next["five"][i-1]), "five: runs not 5 s apart")
		}
	}
	for i, at := range next["nightly"] {
		if i > 0 {
			assert.True(t, at.After(next["nightly"][i-1]), "nightly: runs not increasing")
		}
	}
}

// check-config previews a daylight saving night from any time, each
// instant with its zone's offset.
func TestCheckConfigPreviewsDST(t *testing.T) {
	code, stdout, stderr := runCLI(t, "check-config", "testdata/dst.yaml", "--from", "2026-10-24T12:00:00+02:00", "--count", "4")
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, `  backup: "CRON_TZ=Europe/Berlin 30 2 * * *" (Europe/Berlin), next 4 after 2026-10-24T12:00:00+02:00:
    2026-10-25T02:30:00+02:00
    2026-10-26T02:30:00+01:00
    2026-10-27T02:30:00+01:00
    2026-10-28T02:30:00+01:00
`)
	assert.Contains(t, stdout, `  hourly: "CRON_TZ=Europe/Berlin 30 * * * *" (Europe/Berlin), next 4 after 2026-10-24T12:00:00+02:00:
    2026-10-24T12:30:00+02:00
`)
	next := previewRuns(t, "testdata/dst.yaml", "--from", "2026-10-25T01:00:00+02:00", "--count", "4")
	var got []string
	for _, at := range next["hourly"] {
		got = append(got, at.Format(time.RFC3339))
	}
	assert.Equal(t, []string{"2026-10-25T01:30:00+02:00", "2026-10-25T02:30:00+02:00",
		"2026-10-25T02:30:00+01:00", "2026-10-25T03:30:00+01:00"}, got)

	next = previewRuns(t, "testdata/dst.yaml", "--from", "2026-03-28T12:00:00Z", "--count", "2")
	require.Len(t, next["backup"], 2)
	assert.Equal(t, "2026-03-29T03:00:00+02:00", next["backup"][0].Format(time.RFC3339), "skipped 02:30 runs at the jump")

	for _, bad := range [][]string{{"--from", "yesterday"}, {"--from", "2026-10-24 12:00"}, {"--count", "0"}, {"--count", "1001"}} {
		code, _, stderr := runCLI(t, append([]string{"check-config", "testdata/dst.yaml"}, bad...)...)
		assert.Equal(t, ExitConfig, code, "%v: an invalid flag value exits 3", bad)
		assert.Contains(t, stderr, bad[0]+" ", "%v names the flag", bad)
	}
}

func TestVersionPrints(t *testing.T) {
	code, stdout, _ := runCLI(t, "version")
	require.Equal(t, ExitOK, code)
	assert.Regexp(t, `^lanleader \S+ \(go1\.\d+`, stdout)
}

// TestDemoPortInUse checks that a taken port stops the demo before it starts
// any node, with a hint, rather than leaving a node that dies at once.
func TestDemoPortInUse(t *testing.T) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer c.Close()
	port := c.LocalAddr().(*net.UDPAddr).Port
	base := port - 1 // the taken port is n2's (ephemeral ports are far above 1)

	code, stdout, stderr := runCLI(t, "demo", "--nodes", "3", "--base-port", strconv.Itoa(base))
	assert.Equal(t, ExitFailure, code)
	assert.Contains(t, stderr, fmt.Sprintf("udp port 127.0.0.1:%d is not free; pick another --base-port", port))
	assert.NotContains(t, stdout, "started", "no node may start")
}

// TestRunStatusPortTaken: a status address that cannot be listened on
// stops the start with exit 1 and says which address, instead of running
// on without status.
func TestRunStatusPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	code, _, stderr := runCLI(t, "run", "--config", "testdata/fast.yaml", "--mode=static", "--leader", "a", "--node-id", "a",
		"--http", ln.Addr().String())
	assert.Equal(t, ExitFailure, code)
	assert.Contains(t, stderr, "status endpoint --http (election.http) "+ln.Addr().String())
	assert.Contains(t, stderr, "address already in use")
}

func TestCheckConfigJSON(t *testing.T) {
	code, stdout, _ := runCLI(t, "check-config", "--json", "testdata/bad_election.yaml")
	assert.Equal(t, ExitConfig, code)
	var rep checkReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	assert.False(t, rep.OK)
	assert.Len(t, rep.Errors, 5, "one entry per problem: %v", rep.Errors)

	code, stdout, _ = runCLI(t, "check-config", "--json", "testdata/good.yaml", "--secret-file", "")
	require.Equal(t, ExitOK, code, stdout)
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	assert.True(t, rep.OK)
	assert.Empty(t, rep.Errors)
	assert.Contains(t, rep.Warnings, "no secret_file: packets are not authenticated; anyone on the LAN can claim leadership; "+
		"trigger requests are refused (lanleader keygen makes a key; trigger_without_key: true accepts them)")
	require.Len(t, rep.Jobs, 2)
	assert.Len(t, rep.Jobs[0].Next, 3)
}

// TestStatusAndWhoReadTheConfig: with --config, status takes the endpoint
// address and who the key from the file (a flag still wins).
func TestStatusAndWhoReadTheConfig(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cfg := filepath.Join(t.TempDir(), "l.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("election:\n  http: "+addr+"\n  secret_file: /nonexistent/key\n"), 0o600))

	code, _, stderr := runCLI(t, "status", "--config", cfg, "--timeout", "2s")
	assert.Equal(t, ExitFailure, code)
	assert.Contains(t, stderr, "is lanleader running with --http "+addr+"?", "the address comes from election.http")
	assert.Contains(t, stderr, "status from http://"+addr+"/status: dial tcp")
	assert.NotContains(t, stderr, "httpapi:", "errors name no packages")
	assert.NotContains(t, stderr, `Get "`, "the URL once")

	code, _, stderr = runCLI(t, "who", "--config", cfg, "--bind", "127.0.0.1", "--peers", "127.0.0.1:9")
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, stderr, "/nonexistent/key", "the key comes from election.secret_file")
}

// TestCheckConfigWarnsOfAnHTTPJobWithoutTimeout: a request that never gets
// an answer would hold the job; check-config says so, naming the line.
func TestCheckConfigWarnsOfAnHTTPJobWithoutTimeout(t *testing.T) {
	code, stdout, _ := runCLI(t, "check-config", "--json", "testdata/http_job.yaml")
	require.Equal(t, ExitOK, code, stdout)
	var rep checkReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	assert.Contains(t, rep.Warnings, `testdata/http_job.yaml:9: jobs[0]: http job "digest" has no timeout: a request its server never answers holds the job for ever (with overlap: skip, every later instant is skipped); set timeout`)
}
