// Command lanleader-etcd is lanleader with one more election mode, etcd:
// leadership comes from an etcd cluster, for nodes that do not share a LAN.
// Everything else (jobs, hooks, status, the other modes) is lanleader's.
//
//	lanleader-etcd run --mode=etcd --etcd-endpoints=https://etcd1:2379 --config /etc/lanleader/lanleader.yaml
//
// See docs/operations.md, "etcd mode".
package main

import (
	"github.com/lanleader/lanleader/cli"
	"github.com/lanleader/lanleader/election/etcd/etcdcli"
)

func main() { cli.Main(etcdcli.Mode()) }
