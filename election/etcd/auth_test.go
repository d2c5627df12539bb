package etcd

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

// TestAuthUserLeadsAndWrongPasswordIsRejected runs an etcd with
// authentication enabled and a user whose role may read and write only
// the cluster's prefix (as operations.md tells operators to set up): an
// Elector logging in as that user, its password in a file, leads; one
// with a wrong password ends Run at once with an error naming the user and
// the endpoint, rather than retrying.
func TestAuthUserLeadsAndWrongPasswordIsRejected(t *testing.T) {
	srv, err := etcdtest.Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	admin, err := etcdtest.NewClient(srv.Endpoint)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })

	c := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = admin.RoleAdd(ctx, "lanleader")
	require.NoError(t, err)
	_, err = admin.RoleGrantPermission(ctx, "lanleader", c.prefix+"/", clientv3.GetPrefixRangeEnd(c.prefix+"/"),
		clientv3.PermissionType(clientv3.PermReadWrite))
	require.NoError(t, err)
	_, err = admin.UserAdd(ctx, "lanleader", "right horse")
	require.NoError(t, err)
	_, err = admin.UserGrantRole(ctx, "lanleader", "lanleader")
	require.NoError(t, err)
	require.NoError(t, etcdtest.EnableAuth(admin, "root password"))

	pwFile := filepath.Join(t.TempDir(), "password")
	require.NoError(t, os.WriteFile(pwFile, []byte("right horse\n"), 0o600))
	viaAuth := func(cfg *Config) {
		cfg.Client, cfg.Endpoints = nil, []string{srv.Endpoint}
		cfg.Username, cfg.PasswordFile = "lanleader", pwFile
	}
	c.startWith("a", false, viaAuth, nil)
	lead := c.oneLeader(10 * time.Second)
	assert.Equal(t, "a", lead.node)

	// The leader key is in the authenticated etcd, written as the user.
	root, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint}, Username: "root", Password: "root password",
		DialTimeout: 5 * time.Second, Logger: admin.GetLogger()})
	require.NoError(t, err)
	defer root.Close()
	key, rev, _ := c.leaderKV(root)
	assert.Equal(t, lead.term, uint64(rev), "leader key %s", key)

	// A wrong password: New does not dial; Run returns at once with the
	// rejection instead of retrying.
	b, err := New(Config{NodeID: "b", Endpoints: []string{srv.Endpoint}, Prefix: c.prefix, SessionTTL: testTTL,
		Username: "lanleader", Password: "wrong horse", Logger: testLogger(t, "b")})
	require.NoError(t, err)
	bctx, bcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer bcancel()
	err = b.Run(bctx, election.Callbacks{})
	require.NoError(t, bctx.Err(), "Run did not give up on a rejected password")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrCredentialsRejected)
	assert.Contains(t, err.Error(), `etcd rejected the credentials for user "lanleader" at endpoint `+srv.Endpoint)
	assert.Contains(t, err.Error(), "authentication failed")
}
