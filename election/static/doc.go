// Package static is the election mode for a fixed leader: the node whose
// hostname (short name or FQDN), node id or local interface address matches
// the configured leader name leads, every other node follows it. Nothing is
// sent on the network; every node decides on its own from its own names, so
// the same config can be deployed to all nodes.
//
// Use it when one machine is meant to run the jobs and failover is not
// wanted, or as the simplest mode to try lanleader with.
package static
