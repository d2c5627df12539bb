package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp"
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
	assert.Equal(t, 1, strings.Count(stdout+stderr, bind+" is not an address of any interface here; broadcast and multicast need the interface"),
		"stdout: %s\nstderr: %s", stdout, stderr)
	assert.Contains(t, stderr, "(run waits for the address to come up)")
}

// Issue 25 item 7: a node whose link is down at start can resolve its bind
// address and still fail to open its sockets with an address not up (the
// subnet's broadcast address is gone with the link). run waits for it, as
// for a bind address no interface has, saying so once, and opens the
// sockets when the address comes up instead of exiting.
func TestWaitUpRetriesAnAddressNotUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		env := Env{Context: context.Background(), Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		notUp := fmt.Errorf("udp: bind 198.18.0.255:7483: address not up (is its link down?): %w", udp.ErrAddressNotUp)
		tries := 0
		start := time.Now()
		got, err := waitUp(env, "198.18.0.1", func() (string, error) {
			if tries++; tries <= 3 {
				return "", notUp
			}
			return "sockets", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "sockets", got)
		assert.Equal(t, 4, tries)
		assert.Equal(t, 3*bindPoll, time.Since(start), "one look per bindPoll")
		assert.Equal(t, 1, strings.Count(logs.String(), "waiting for the bind address to come up"), logs.String())
		assert.Contains(t, logs.String(), "198.18.0.255:7483: address not up")

		// Any other error is returned at once: a wrong setting.
		tries = 0
		_, err = waitUp(env, "x", func() (string, error) { tries++; return "", errors.New("bad") })
		assert.EqualError(t, err, "bad")
		assert.Equal(t, 1, tries)

		// Stopped while waiting: says so, with the context's error.
		ctx, cancel := context.WithCancel(context.Background())
		env.Context = ctx
		go func() { time.Sleep(2500 * time.Millisecond); cancel() }()
		_, err = waitUp(env, "198.18.0.1", func() (string, error) { return "", notUp })
		assert.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "stopped while waiting for --bind 198.18.0.1 to come up")
	})
}
