// Package udptest is an in-memory network and a seeded, deterministic
// simulator for the UDP election core (package protocol).
//
// A Sim runs N protocol.Nodes on a fake clock and delivers their messages
// with seeded loss, delay, jitter, duplication and reordering, through
// symmetric or one-way partitions, and crashes, restarts (with a new
// incarnation), pauses and resumes nodes. Every run is a pure function of
// its seed: a failing scenario prints its seed and its trace, and
//
//	go test ./election/udp/udptest -run TestScenarios -sim.seed=N -v
//
// replays it exactly. The harness follows etcd-raft's test network: nodes
// in a map, Isolate, Cut, Partition, Heal.
package udptest
