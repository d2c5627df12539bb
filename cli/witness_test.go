package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/httpapi"
)

// TestWitnessShowsAsAWitness runs two nodes and a witness on loopback
// with one shared peers list (quorum on by default: 3 voters). Once a node
// leads and the witness follows it (their own log lines say so), `who`,
// the witness's /status, page and metrics show it as a witness. (That the
// leader lists it as one is the protocol's Quorum().Witnesses and Peers,
// TestWitnessIsNeverNamedSuccessor.)
func TestWitnessShowsAsAWitness(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "lanleader.yaml")
	require.NoError(t, os.WriteFile(config, []byte("jobs:\n  - name: backup\n    schedule: '@daily'\n    command: [true]\n"), 0o600))
	ids := []string{"nas1", "nas2", "pi"}
	ports, peers, https := map[string]int{}, []string{}, map[string]string{}
	for _, id := range ids {
		ports[id] = freeUDPPort(t)
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", ports[id]))
		https[id] = "127.0.0.1:" + freeTCPPort(t)
	}
	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	type event struct{ node, msg, leader string }
	events := make(chan event, 64)
	for _, id := range ids {
		args := []string{"run", "--mode=udp", "--node-id", id, "--cluster", "witness-test", "--bind", "127.0.0.1",
			"--port", fmt.Sprint(ports[id]), "--peers", strings.Join(peers, ","), "--interval", "50ms",
			"--config", config, "--http", https[id], "--state-dir=", "--log-format", "json"}
		if id == "pi" {
			args = append(args, "--role", "witness", "--priority", "255")
		}
		pr, pw := io.Pipe()
		wg.Go(func() {
			Execute(ctx, args, io.Discard, pw)
			pw.Close()
		})
		wg.Go(func() {
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				var l struct{ Msg, Leader string }
				if json.Unmarshal(sc.Bytes(), &l) == nil && (l.Msg == "became leader" || l.Msg == "leader changed") {
					select {
					case events <- event{id, l.Msg, l.Leader}:
					case <-ctx.Done():
					}
				}
			}
		})
	}
	var leader, follows string
	for leader == "" || follows != leader {
		select {
		case e := <-events:
			switch {
			case e.msg == "became leader":
				leader = e.node
			case e.node == "pi":
				follows = e.leader
			}
		case <-ctx.Done():
			require.FailNow(t, "no leader followed by the witness within 60 s", "leader %q, witness follows %q", leader, follows)
		}
	}
	assert.NotEqual(t, "pi", leader, "the witness never leads, whatever its priority")

	doc, err := httpapi.FetchStatus(ctx, https["pi"])
	require.NoError(t, err)
	assert.Equal(t, "follower", doc.Role.String())
	var v udpView
	require.NoError(t, json.Unmarshal(doc.Extra, &v))
	assert.True(t, v.Guarantee.Witness)
	assert.True(t, v.Guarantee.Quorum)
	assert.Equal(t, 3, v.Guarantee.Voters)
	assert.Contains(t, v.Guarantee.Line, "this node a witness")
	require.NotNil(t, v.Quorum)
	assert.Contains(t, v.Quorum.Witnesses, "pi", "a witness counts itself")

	get := func(id, path string) string {
		resp, err := http.Get("http://" + https[id] + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	assert.Contains(t, get("pi", "/"), `<b id="role">witness</b>`)
	assert.Contains(t, get("pi", "/metrics"), "\nlanleader_witness 1\n")
	assert.Contains(t, get("pi", "/metrics"), "\nlanleader_quorum_voters 3\n")
	assert.Contains(t, get(leader, "/metrics"), "\nlanleader_witness 0\n")

	// who lists the answers that came within its timeout. On a loaded
	// machine the three in-process nodes can take longer than that to
	// answer, or a stall of the whole process can make them fail over (the
	// leader's lease ran out while nobody ran): who is asked again, a
	// bounded number of times, of the leader the nodes last reported, until
	// every answer made it. What it shows is asserted as it is.
	latest := func() {
		for {
			select {
			case e := <-events:
				if e.msg == "became leader" {
					leader = e.node
				}
			default:
				return
			}
		}
	}
	leaderRe := func() string { return `(?m)^LEADER +TERM +ADDRESS +RTT\n` + leader + ` ` }
	witnessRe := func() string { return `(?m)^WITNESS +FOLLOWS +ADDRESS +RTT\npi +` + leader + ` +127\.0\.0\.1:` }
	var code int
	var out, errOut string
	for range 10 {
		latest()
		code, out, errOut = runCLI(t, "who", "--cluster", "witness-test", "--bind", "127.0.0.1", "--peers", strings.Join(peers, ","), "--timeout", "500ms")
		if code == ExitOK && regexp.MustCompile(leaderRe()).MatchString(out) && regexp.MustCompile(witnessRe()).MatchString(out) {
			break
		}
		t.Logf("who: exit %d, not every answer came within 500ms or %s no longer leads: %s%s", code, leader, out, errOut)
	}
	require.Equal(t, ExitOK, code, errOut)
	assert.NotEqual(t, "pi", leader)
	assert.Regexp(t, leaderRe(), out)
	assert.Regexp(t, witnessRe(), out)
}
