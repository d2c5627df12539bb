package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 25 item 5: adding a key is one command. keygen FILE writes a key
// file that run accepts (mode 0600), never replaces one, and without FILE
// prints a key line.
func TestKeygen(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	code, out, errOut := runCLI(t, "keygen", key)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "wrote a new key to "+key+" (mode 0600)")
	assert.Contains(t, out, "secret_file: "+key)
	st, err := os.Stat(key)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	_, err = loadKeyring(key)
	require.NoError(t, err, "run accepts it")

	before, _ := os.ReadFile(key)
	code, _, errOut = runCLI(t, "keygen", key)
	assert.Equal(t, ExitFailure, code)
	assert.Contains(t, errOut, "exists: not replaced")
	after, _ := os.ReadFile(key)
	assert.Equal(t, before, after)

	code, out, _ = runCLI(t, "keygen")
	assert.Equal(t, ExitOK, code)
	assert.Regexp(t, `^[0-9a-f]{64}\n$`, out)

	code, _, _ = runCLI(t, "keygen", "a", "b")
	assert.Equal(t, ExitUsage, code)
}

// Issue 25 item 5: no key, no remote control. A udp node without
// secret_file refuses `lanleader trigger` (the client says why and how to
// fix it; the node logs the sender and the fix) unless its file opts in
// with trigger_without_key.
func TestTriggerRefusedByANodeWithoutKey(t *testing.T) {
	for _, optIn := range []bool{false, true} {
		t.Run(fmt.Sprintf("trigger_without_key %v", optIn), func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "lanleader.yaml")
			body := "election:\n  mode: udp\n  interval: 50ms\n"
			if optIn {
				body += "  trigger_without_key: true\n"
			}
			body += "jobs:\n  - name: hello\n    schedule: '@yearly'\n    shell: 'true'\n"
			require.NoError(t, os.WriteFile(cfg, []byte(body), 0o600))
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			require.NoError(t, err)
			port := pc.LocalAddr().(*net.UDPAddr).Port
			require.NoError(t, pc.Close())
			self := fmt.Sprintf("127.0.0.1:%d", port)

			var mu sync.Mutex
			var logs bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int, 1)
			go func() {
				done <- Execute(ctx, []string{"run", "--config", cfg, "--node-id", "n1", "--bind", "127.0.0.1",
					"--port", fmt.Sprint(port), "--peers", self, "--http=", "--state-dir="}, &bytes.Buffer{}, lockedBuffer{&mu, &logs})
			}()
			defer func() { cancel(); <-done }()

			var code int
			var out, errOut string
			for range 100 { // until the node leads: a few hundred ms
				code, out, errOut = runCLI(t, "trigger", "--transport", "unicast", "--peers", self, "--bind", "127.0.0.1",
					"--timeout", "300ms", "hello")
				if !strings.Contains(errOut, "no leader of cluster") {
					break
				}
			}
			mu.Lock()
			log := logs.String()
			mu.Unlock()
			if optIn {
				assert.Equal(t, ExitOK, code, errOut)
				assert.Contains(t, out, "started hello on n1")
				assert.NotContains(t, log, "refused a request")
				return
			}
			assert.Equal(t, ExitFailure, code, errOut)
			assert.Contains(t, errOut, "n1 refuses trigger requests: the cluster has no key")
			assert.Contains(t, errOut, "lanleader keygen FILE")
			assert.Contains(t, errOut, "nothing ran")
			assert.Regexp(t, `level=WARN msg="trigger: refused a request: this cluster has no key[^"]*" node=n1 from=trigger-[0-9a-f]{8} addr=127\.0\.0\.1:\d+ job=hello`, log)
			assert.Contains(t, log, "trigger_without_key: true")
			assert.Contains(t, log, "trigger requests are refused", "said at start too")
		})
	}
}

// lockedBuffer is a bytes.Buffer a daemon writes while a test reads it.
type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
