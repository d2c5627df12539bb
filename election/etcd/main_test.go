package etcd

import (
	"fmt"
	"os"
	"testing"

	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

// server is the one etcd all tests of this package share; each test uses
// its own key prefix.
var server *etcdtest.Server

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lanleader-etcd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server, err = etcdtest.Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	server.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}
