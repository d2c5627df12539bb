package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInputNamesCulprit: a newcomer's wrong inputs are refused with a
// message naming the file, line, key or flag and the value, in the user's
// words (no protocol field names), each problem once.
func TestBadInputNamesCulprit(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	udp := []string{"--bind", "127.0.0.1", "--peers", "127.0.0.1:1"}
	good := file("good.yaml", "jobs:\n  - name: a\n    schedule: '@every 5s'\n    command: [true]\n")
	typo := file("typo.yaml", "election:\n  mode: static\n  leadr: vm\n")
	notDuration := file("interval.yaml", "election:\n  interval: 5\n  misses: 0\n")
	longMisses := file("misses.yaml", "election:\n  misses: 200\n")
	keyed := file("keyed.yaml", "election:\n  secret_file: "+filepath.Join(dir, "nokey")+"\n")
	spacedID := file("spaced.yaml", "election:\n  mode: static\n  leader: vm\n  node_id: \"web 1\"\n")
	tabbedID := file("tabbed.yaml", "election:\n  node_id: \"web\\t1\"\n")
	hosts := file("hosts.yaml", "election:\n  mode: static\n  leader: vm\n  http_hosts: [nas.lan, \"nas.lan:7484\"]\n")

	type badInput struct {
		name string
		args []string
		code int
		want []string // stderr contains each
		not  []string // stderr contains none
		once []string // stderr contains each exactly once
	}
	t.Setenv("LANLEADER_TEST_LEADS", "maybe")
	tests := []badInput{
		{"typo'd election key lists the known keys once", []string{"check-config", typo}, ExitConfig,
			[]string{typo + `:3: election.leadr: unknown key (did you mean "leader"?)`},
			nil, []string{"leader,", "env_var,", "cluster,"}},
		{"undecodable interval is reported once, as written", []string{"check-config", notDuration}, ExitConfig,
			[]string{notDuration + `:2: election.interval: "5": not a duration`,
				notDuration + `:3: election.misses (or --misses): 0: want at least 2`},
			[]string{"0s: must be positive"}, []string{"election.interval"}},
		{"--interval too long for misses", append([]string{"check-config", good, "--interval", "1h"}, udp...), ExitConfig,
			[]string{"--interval: interval 1h0m0s × misses 3 is over 30s"},
			[]string{"ForgetPeerAfter", "election settings"}, nil},
		{"--misses too many for the interval", append([]string{"check-config", good, "--misses", "1000"}, udp...), ExitConfig,
			[]string{"--misses: interval 200ms × misses 1000 is over 30s"},
			[]string{"ForgetPeerAfter"}, nil},
		{"misses in the file too many", append([]string{"check-config", longMisses}, udp...), ExitConfig,
			[]string{longMisses + ":2: election.misses (or --misses): interval 200ms × misses 200 is over 30s"},
			[]string{"ForgetPeerAfter"}, nil},
		{"who with a missing key file", []string{"who", "--secret-file", filepath.Join(dir, "nokey"), "--bind", "127.0.0.1", "--peers", "127.0.0.1:9"}, ExitConfig,
			[]string{"--secret-file: key file: open " + filepath.Join(dir, "nokey"), "make one with: lanleader keygen " + filepath.Join(dir, "nokey")},
			nil, nil},
		{"trigger with a missing key file", []string{"trigger", "job", "--secret-file", filepath.Join(dir, "nokey"), "--bind", "127.0.0.1", "--peers", "127.0.0.1:9"}, ExitConfig,
			[]string{"--secret-file: key file: open "}, nil, nil},
		{"run with a missing key file in the file", append([]string{"check-config", keyed}, udp...), ExitConfig,
			[]string{keyed + ":2: election.secret_file (or --secret-file): key file: open", "lanleader keygen"}, nil, nil},
		{"trigger without a job", []string{"trigger"}, ExitUsage,
			[]string{"want exactly 1 job name, got none"}, []string{"got 0: "}, nil},
		{"env mode with an empty variable name", []string{"check-config", good, "--mode", "env", "--env-var", ""}, ExitConfig,
			[]string{"--env-var: empty: name the variable that says whether this node leads (default LANLEADER_LEADER)"}, nil, nil},
		{"env mode with a value that is no boolean", []string{"run", "--config", good, "--mode", "env", "--env-var", "LANLEADER_TEST_LEADS", "--http=", "--state-dir="}, ExitConfig,
			[]string{`LANLEADER_TEST_LEADS="maybe": want true, 1 or yes to lead`}, nil, nil},
		{"run with a node id with a space", []string{"run", "--config", good, "--mode", "env", "--env-var", "LANLEADER_TEST_LEADS", "--http=", "--state-dir=", "--node-id", "web 1"}, ExitConfig,
			[]string{`--node-id: "web 1": space (U+0020) at byte 3: a node id is 1-64 bytes of printable UTF-8 without whitespace`}, []string{"LANLEADER_TEST_LEADS"}, nil},
		{"node id with a space in the file", []string{"check-config", spacedID}, ExitConfig,
			[]string{spacedID + `:4: election.node_id (or --node-id): "web 1": space (U+0020) at byte 3`}, nil, nil},
		{"node id with a tab in the file", append([]string{"check-config", tabbedID}, udp...), ExitConfig,
			[]string{tabbedID + `:2: election.node_id (or --node-id): "web\t1": whitespace (U+0009) at byte 3`}, nil, nil},
		{"cluster name with a tab", []string{"check-config", good, "--mode", "udp", "--cluster", "web\tfarm"}, ExitConfig,
			[]string{`--cluster: "web\tfarm": whitespace (U+0009) at byte 3: a cluster name is 1-64 bytes of printable UTF-8 (spaces allowed)`}, nil, nil},
		{"node id with a control character", []string{"check-config", good, "--mode", "static", "--leader", "vm", "--node-id", "web\x1b1"}, ExitConfig,
			[]string{`--node-id: "web\x1b1": control character (U+001B) at byte 3`}, nil, nil},
		{"node id with a no-break space", []string{"check-config", good, "--mode", "static", "--leader", "vm", "--node-id", "web\u00a01"}, ExitConfig,
			[]string{`--node-id: "web\u00a01": whitespace (U+00A0) at byte 3`}, nil, nil},
		{"node id not UTF-8", append([]string{"check-config", good, "--node-id", "web\xff1"}, udp...), ExitConfig,
			[]string{`--node-id: "web\xff1": not valid UTF-8 at byte 3`}, nil, nil},
		{"a status endpoint name with a port", []string{"check-config", hosts}, ExitConfig,
			[]string{hosts + `:4: election.http_hosts (or --http-hosts): "nas.lan:7484": want a host name such as nas.lan`}, []string{`"nas.lan":`}, nil},
		{"an IP address as a status endpoint name", []string{"check-config", good, "--mode", "static", "--leader", "vm", "--http-hosts", "nas.lan,10.0.0.7"}, ExitConfig,
			[]string{`--http-hosts: "10.0.0.7": want a host name`}, nil, nil},
		{"node id too long", append([]string{"check-config", good, "--node-id", strings.Repeat("n", 65)}, udp...), ExitConfig,
			[]string{`--node-id: "` + strings.Repeat("n", 65) + `": 65 bytes, at most 64`}, nil, []string{"bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			for _, w := range tt.want {
				assert.Contains(t, stderr, w)
			}
			for _, n := range tt.not {
				assert.NotContains(t, stderr, n)
			}
			for _, o := range tt.once {
				assert.Equal(t, 1, strings.Count(stderr, o), "%q once in: %s", o, stderr)
			}
			assert.NotContains(t, stderr, "panic")
			assert.NotRegexp(t, `(^|\s)(config|wire|protocol|udp|jobs|httpapi): `, stderr, "errors name flags and keys, not packages")
		})
	}
}
