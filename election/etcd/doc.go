// Package etcd is the etcd election mode: leadership comes from an etcd
// cluster instead of the LAN protocol, for nodes that do not share one LAN
// (several subnets or sites) and already run etcd.
//
// The Elector campaigns with go.etcd.io/etcd/client/v3/concurrency: a
// session (a lease with a TTL) per attempt, Campaign for the leader key,
// Observe for the leader's identity, Resign on a graceful stop. The leader
// key's creation revision is the term: etcd makes it strictly increasing
// across leaders, so it is a fencing token jobs and hooks can check.
//
// A leader acts only while its lease is certainly alive by its own clock:
// the lease's deadline is the send time of the last keepalive etcd answered
// plus the TTL, minus a margin, measured on a clock that counts through
// suspend. A leader cut off from etcd therefore stops acting before etcd
// can expire its lease and elect another node, and a leader whose session
// ended (Session.Done) steps down at once rather than trusting Campaign's
// old answer.
//
// Ledger keeps the job ledger in etcd under the same prefix: a run's entry
// is written in a transaction that holds only while this node's leader key
// still exists with its revision, before the run's process starts, and a
// new leader reads the ledger before it schedules anything.
//
// This package is its own Go module so that the core module does not depend
// on etcd; cmd/lanleader-etcd builds a lanleader binary with this mode.
package etcd
