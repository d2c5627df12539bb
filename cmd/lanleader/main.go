// Command lanleader keeps exactly one leader among the servers of a LAN and
// runs cron jobs only on that leader, with no store: the nodes agree among
// themselves.
//
//	lanleader run --config /etc/lanleader/lanleader.yaml
//
// The command line lives in package cli, so that other modules can build a
// lanleader binary with more election modes (cli.Main(theirMode)). See
// "lanleader help" and docs/operations.md.
package main

import "github.com/lanleader/lanleader/cli"

func main() { cli.Main() }
