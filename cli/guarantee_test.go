package cli

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuaranteeFollowsTheVoters is issue 25's rule: quorum is on whenever
// the voters are known and at least 3 — cluster_size given, or peers
// listed — unless quorum: off; with two voters, or with broadcast
// discovery and no cluster_size, it is off, and the line says what a
// partition then does and what to do about it. Contradictions are named
// by key.
func TestGuaranteeFollowsTheVoters(t *testing.T) {
	for _, tc := range []struct {
		name               string
		clusterSize, peers int
		quorum             string
		witness            bool
		want               string // the line, or the problem
		key                string // the problem's key, "" for none
	}{
		{"broadcast", 0, 0, quorumAuto, false, "no quorum: broadcast discovery without cluster_size, so the voters are unknown; a partition runs jobs on both sides until it heals: set cluster_size on every node (with two servers, add a witness: docs/operations.md#two-servers)", ""},
		{"two peers", 0, 2, quorumAuto, false, "no quorum: 2 voters (peers: this node and 1 listed); a partition runs jobs on both sides until it heals: add a witness (docs/operations.md#two-servers)", ""},
		{"three peers", 0, 3, quorumAuto, false, "quorum: 3 voters (peers: this node and 2 listed); a minority side runs nothing", ""},
		{"cluster_size", 5, 0, quorumAuto, false, "quorum: 5 voters (cluster_size); a minority side runs nothing", ""},
		{"cluster_size 2", 2, 0, quorumAuto, false, "quorum: 2 voters (cluster_size); a minority side runs nothing, and either node failing stops the jobs: add a witness (docs/operations.md#two-servers)", ""},
		{"cluster_size and peers agree", 3, 3, quorumAuto, false, "quorum: 3 voters (cluster_size); a minority side runs nothing", ""},
		{"quorum on with two peers", 0, 2, quorumOn, false, "quorum: 2 voters (peers: this node and 1 listed); a minority side runs nothing, and either node failing stops the jobs: add a witness (docs/operations.md#two-servers)", ""},
		{"off", 0, 3, quorumOff, false, "no quorum (quorum: off): a partition runs jobs on both sides until it heals", ""},
		{"witness", 3, 0, quorumAuto, true, "quorum: 3 voters (cluster_size), this node a witness: it votes and acknowledges, never leads and runs nothing; a minority side runs nothing", ""},
		{"off and cluster_size", 3, 0, quorumOff, false, "off, but cluster_size is 3, which turns quorum on: drop one of them", "quorum"},
		{"off and a witness", 0, 3, quorumOff, true, "witness: a witness only votes, and quorum is off", "role"},
		{"on, voters unknown", 0, 0, quorumOn, false, "on: the number of voters is unknown: set cluster_size", "quorum"},
		{"cluster_size and peers disagree", 3, 4, quorumAuto, false, "3, but peers name 4 voters (this node and 3 other addresses)", "cluster_size"},
		{"witness, broadcast", 0, 0, quorumAuto, true, "witness: a witness only votes, in quorum mode, and the number of voters is unknown", "role"},
		{"witness of two", 0, 2, quorumAuto, true, "witness: a witness only votes, in quorum mode, and peers name only 2 voters", "role"},
	} {
		g, err := deriveGuarantee(tc.clusterSize, tc.peers, tc.quorum, tc.witness)
		if tc.key == "" {
			require.NoError(t, err, tc.name)
			assert.Equal(t, tc.want, g.String(), tc.name)
			continue
		}
		var gp guaranteeProblem
		require.ErrorAs(t, err, &gp, tc.name)
		assert.Equal(t, tc.key, gp.key, tc.name)
		assert.Contains(t, gp.err.Error(), tc.want, tc.name)
	}
}

// TestPeerVotersCountsThisNodeOnce: a peers list shared by every node
// names this node too; it is counted once, whether it is listed or not,
// by address and port, by host name or by node id, and an entry listed
// twice counts once. After resolving, the transport's own address is left
// out and the rest counted once each.
func TestPeerVotersCountsThisNodeOnce(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	for _, tc := range []struct {
		peers []string
		want  int
	}{
		{nil, 0},
		{[]string{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"}, 3}, // this node is :7001
		{[]string{"127.0.0.1:7002", "127.0.0.1:7003"}, 3},
		{[]string{"127.0.0.1:7002", "127.0.0.1:7002"}, 2},
		{[]string{"nas2", "pi", "nas1"}, 3}, // nas1 is the node id
		{[]string{"nas2.lan", "pi.lan", "NAS1.lan:7001"}, 3},
		{[]string{host, "other-host"}, 2},
		{[]string{"198.18.0.2", "198.18.0.3"}, 3},
		{[]string{"[::1]:7002"}, 2},
	} {
		assert.Equal(t, tc.want, peerVoters(tc.peers, 7001, "nas1"), "%v", tc.peers)
	}
	ap := netip.MustParseAddrPort
	assert.Equal(t, 3, resolvedVoters([]netip.AddrPort{ap("10.0.0.2:7483"), ap("10.0.0.3:7483"), ap("10.0.0.2:7483")}))
	assert.Equal(t, 1, resolvedVoters(nil))
}

// TestCheckConfigStatesTheGuarantee: check-config prints the line run
// logs at start, and refuses what contradicts itself, naming the key.
func TestCheckConfigStatesTheGuarantee(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	job := "jobs:\n  - name: backup\n    schedule: '@daily'\n    command: [true]\n"
	loop := []string{"--bind", "127.0.0.1", "--port", "7001"}
	three := file("three.yaml", "election:\n  peers: [127.0.0.1:7001, 127.0.0.1:7002, 127.0.0.1:7003]\n"+job)
	two := file("two.yaml", "election:\n  peers: [127.0.0.1:7001, 127.0.0.1:7002]\n"+job)
	off := file("off.yaml", "election:\n  quorum: off\n  peers: [127.0.0.1:7002, 127.0.0.1:7003]\n")
	offBool := file("offbool.yaml", "election:\n  quorum: false\n  cluster_size: 3\n")
	bogus := file("bogus.yaml", "election:\n  quorum: maybe\n  role: arbiter\n")
	preempt := file("preempt.yaml", "election:\n  preempt: true\n  peers: [127.0.0.1:7002, 127.0.0.1:7003]\n")

	code, out, errOut := runCLI(t, append([]string{"check-config", three}, loop...)...)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\n  quorum: 3 voters (peers: this node and 2 listed); a minority side runs nothing\n")

	code, out, errOut = runCLI(t, append([]string{"check-config", two}, loop...)...)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\n  no quorum: 2 voters (peers: this node and 1 listed); a partition runs jobs on both sides until it heals: add a witness (docs/operations.md#two-servers)\n")

	code, out, errOut = runCLI(t, "check-config", three, "--bind", "127.0.0.1", "--cluster-size", "3", "--role", "witness", "--port", "7001")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "ok (mode udp, 0 jobs)", "a witness runs no jobs")
	assert.Contains(t, out, "this node a witness")
	assert.Contains(t, errOut, "warning: role witness: this node never leads, so the 1 jobs and 0 services of "+three+" run on the leader, never here")

	code, out, errOut = runCLI(t, append([]string{"check-config", off}, loop...)...)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "no quorum (quorum: off)")

	code, _, errOut = runCLI(t, append([]string{"check-config", offBool}, loop...)...)
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, errOut, offBool+":2: election.quorum (or --quorum): off, but cluster_size is 3, which turns quorum on: drop one of them")

	code, _, errOut = runCLI(t, append([]string{"check-config", bogus}, loop...)...)
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, errOut, bogus+`:2: election.quorum (or --quorum): "maybe": want auto, on or off`)
	assert.Contains(t, errOut, bogus+`:3: election.role (or --role): "arbiter": want node or witness`)

	code, _, errOut = runCLI(t, append([]string{"check-config", preempt}, loop...)...)
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, errOut, preempt+":2: election.preempt (or --preempt): not supported in quorum mode, which is on: quorum: 3 voters (peers: this node and 2 listed)")
	assert.Contains(t, errOut, "set quorum: off to keep preempt")

	code, _, errOut = runCLI(t, "check-config", two, "--bind", "127.0.0.1", "--port", "7001", "--role", "witness")
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, errOut, "--role: witness: a witness only votes, in quorum mode, and peers name only 2 voters")
	assert.False(t, strings.Contains(errOut, "jobs"), "no warning about jobs after an error: %s", errOut)
}
