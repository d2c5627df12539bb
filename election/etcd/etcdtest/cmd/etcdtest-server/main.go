// Command etcdtest-server runs a throwaway one-member etcd (package
// etcdtest) on a free 127.0.0.1 port, prints its client URL, and runs until
// SIGINT or SIGTERM, then deletes its data. It is for trying the etcd mode
// and for manual failover tests where no etcd is installed:
//
//	go run ./etcdtest/cmd/etcdtest-server
//	lanleader-etcd run --mode=etcd --etcd-endpoints=http://127.0.0.1:PORT --config ...
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

func main() {
	dir, err := os.MkdirTemp("", "etcdtest-server-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdtest-server:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	s, err := etcdtest.Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdtest-server:", err)
		os.Exit(1)
	}
	defer s.Close()
	fmt.Println(s.Endpoint)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
}
