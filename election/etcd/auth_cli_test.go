package etcd_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestModeAuthConfigErrors: username and password settings are checked
// before any network use (exit 3); each problem names the file line and
// key or the flag, and the password file.
func TestModeAuthConfigErrors(t *testing.T) {
	t.Setenv(etcd.PasswordEnv, "")
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	require.NoError(t, os.WriteFile(pw, []byte("s3cret\n"), 0o600))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	missing := filepath.Join(dir, "missing")
	file := filepath.Join(dir, "lanleader.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`election:
  mode: etcd
  etcd:
    endpoints: [http://127.0.0.1:1]
    username: lanleader
jobs:
  - name: j
    schedule: "@every 1s"
    command: ["true"]
`), 0o600))
	check := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cli.Execute(context.Background(), append([]string{"check-config", file}, args...), &out, &errb, etcdcli.Mode())
		return code, errb.String()
	}

	code, stderr := check()
	assert.Equal(t, cli.ExitConfig, code)
	assert.Contains(t, stderr, file+`:5: election.etcd.username (or --etcd-username): "lanleader" without a password: set password_file or LANLEADER_ETCD_PASSWORD`)

	code, stderr = check("--etcd-password-file", missing)
	assert.Equal(t, cli.ExitConfig, code)
	assert.Contains(t, stderr, "--etcd-password-file: open "+missing+": no such file or directory")

	code, stderr = check("--etcd-password-file", empty)
	assert.Equal(t, cli.ExitConfig, code)
	assert.Contains(t, stderr, fmt.Sprintf("--etcd-password-file: %q: empty", empty))

	code, stderr = check("--etcd-username", "", "--etcd-password-file", pw)
	assert.Equal(t, cli.ExitConfig, code)
	assert.Contains(t, stderr, "--etcd-username: empty, but a password is given")

	code, stderr = check("--etcd-password-file", pw)
	assert.Equal(t, cli.ExitOK, code, "stderr: %s", stderr)

	t.Setenv(etcd.PasswordEnv, "s3cret")
	code, stderr = check()
	assert.Equal(t, cli.ExitOK, code, "stderr: %s", stderr)
	_, inEnv := os.LookupEnv(etcd.PasswordEnv)
	assert.False(t, inEnv, "the password was left in the environment, for the jobs to inherit")

	t.Setenv(etcd.PasswordEnv, "s3cret")
	code, stderr = check("--etcd-password-file", pw)
	assert.Equal(t, cli.ExitConfig, code)
	assert.Contains(t, stderr, "and a password is also given directly (LANLEADER_ETCD_PASSWORD): give one")
}

// TestRunModeAuth runs lanleader-etcd (cli.Execute) against an etcd with
// authentication enabled: with the password in LANLEADER_ETCD_PASSWORD it
// leads, and its job does not see the password; with a wrong password in
// the file it exits at once (exit 3) saying etcd rejected the user.
func TestRunModeAuth(t *testing.T) {
	srv, err := etcdtest.Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	admin, err := etcdtest.NewClient(srv.Endpoint)
	require.NoError(t, err)
	defer admin.Close()
	require.NoError(t, etcdtest.EnableAuth(admin, "root password"))

	dir := t.TempDir()
	seen := filepath.Join(dir, "seen")
	prefix := "/test/" + t.Name()
	cfg := filepath.Join(dir, "lanleader.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`election:
  mode: etcd
  http: ""
  etcd:
    endpoints: [%s]
    prefix: %s
    session_ttl: 2s
    username: root
jobs:
  - name: env
    schedule: "* * * * * *"
    command: ["sh", "-c", "echo \"${%s-unset}\" > %s"]
`, srv.Endpoint, prefix, etcd.PasswordEnv, seen)), 0o600))

	t.Setenv(etcd.PasswordEnv, "root password")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var log syncBuffer
	go func() {
		done <- cli.Execute(ctx, []string{"run", "--config", cfg, "--node-id", "a"}, &log, &log, etcdcli.Mode())
	}()
	root, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint}, Username: "root", Password: "root password",
		DialTimeout: 5 * time.Second, Logger: admin.GetLogger()})
	require.NoError(t, err)
	defer root.Close()
	var content []byte
	require.Eventually(t, func() bool {
		content, err = os.ReadFile(seen)
		return err == nil && len(content) > 0
	}, 20*time.Second, 20*time.Millisecond, "no job ran; log:\n%s", &log)
	assert.Equal(t, "unset\n", string(content), "the job inherited the password")
	resp, err := root.Get(context.Background(), prefix+"/election/", clientv3.WithPrefix())
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	assert.Equal(t, "a", string(resp.Kvs[0].Value))
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, cli.ExitOK, code, "log:\n%s", &log)
	case <-time.After(20 * time.Second):
		t.Fatalf("run did not stop; log:\n%s", &log)
	}

	wrong := filepath.Join(dir, "wrong")
	require.NoError(t, os.WriteFile(wrong, []byte("wrong password\n"), 0o600))
	t.Setenv(etcd.PasswordEnv, "")
	var out, errb bytes.Buffer
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel2()
	code := cli.Execute(ctx2, []string{"run", "--config", cfg, "--node-id", "b", "--etcd-password-file", wrong}, &out, &errb, etcdcli.Mode())
	require.NoError(t, ctx2.Err(), "run did not give up on a rejected password")
	assert.Equal(t, cli.ExitConfig, code, "stderr: %s", errb.String())
	assert.Contains(t, errb.String(), `etcd rejected the credentials for user "root" at endpoint `+srv.Endpoint)
}

// TestRunModeAuthWaitsForEtcd: with a username, run whose etcd does not
// answer keeps running and says at WARN that etcd is unreachable (as
// without one), instead of exiting after the dial timeout; stopped, it
// exits 0.
func TestRunModeAuthWaitsForEtcd(t *testing.T) {
	t.Setenv(etcd.PasswordEnv, "s3cret")
	cfg := filepath.Join(t.TempDir(), "lanleader.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`election:
  mode: etcd
  http: ""
  etcd:
    endpoints: [http://127.0.0.1:1]
    username: lanleader
jobs:
  - name: j
    schedule: "@every 1h"
    command: ["true"]
`), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var log syncBuffer
	go func() {
		done <- cli.Execute(ctx, []string{"run", "--config", cfg, "--node-id", "a", "--state-dir="}, &log, &log, etcdcli.Mode())
	}()
	// One attempt takes the dial timeout, 5 s.
	require.Eventually(t, func() bool {
		select {
		case code := <-done:
			done <- code
			return true
		default:
			return strings.Contains(log.String(), `level=WARN msg="etcd: unreachable; trying again"`)
		}
	}, 20*time.Second, 50*time.Millisecond, "log:\n%s", &log)
	select {
	case code := <-done:
		t.Fatalf("run exited (%d) while etcd was unreachable; log:\n%s", code, &log)
	default:
	}
	assert.Contains(t, log.String(), `etcd: authenticating as user \"lanleader\" at endpoint http://127.0.0.1:1`)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, cli.ExitOK, code, "log:\n%s", &log)
	case <-time.After(20 * time.Second):
		t.Fatalf("run did not stop; log:\n%s", &log)
	}
}
