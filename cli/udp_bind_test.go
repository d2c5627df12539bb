package cli

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunBindNotUpWarnsOnce: run with a bind address that no interface has
// says so once as it starts waiting (not also as a config warning just
// before); stopped, it exits 0. check-config still warns.
func TestRunBindNotUpWarnsOnce(t *testing.T) {
	const bind = "198.18.9.9" // benchmarking range: on no interface here
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr() == netip.MustParseAddr(bind) {
			t.Skipf("%s is up on this host", bind)
		}
	}
	// Stopped before it starts: run gets as far as one look at the bind
	// address (a WARN if it were to wait) and returns.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := Execute(ctx, []string{"run", "--config", "testdata/good.yaml", "--bind", bind, "--node-id", "n1",
		"--http=", "--state-dir="}, &out, &errOut)
	assert.Equal(t, ExitOK, code, "stderr: %s", errOut.String())
	log := errOut.String()
	assert.Equal(t, 1, strings.Count(log, bind+" is not an address of any interface"), "log:\n%s", log)
	assert.Equal(t, 1, strings.Count(log, "waiting for the bind address to come up"), "log:\n%s", log)
	assert.Contains(t, log, "stopped while waiting for --bind "+bind+" to come up")

	code, stdout, stderr := runCLI(t, "check-config", "testdata/good.yaml", "--bind", bind)
	assert.Equal(t, ExitOK, code, "stderr: %s", stderr)
	assert.Equal(t, 1, strings.Count(stdout+stderr, bind+" is not an address of any interface here; broadcast and multicast need the interface (run waits for the address to come up)"),
		"stdout: %s\nstderr: %s", stdout, stderr)
}
