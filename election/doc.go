// Package election defines the contract every lanleader election mode
// implements: an Elector that decides whether this node leads, the Status it
// reports, and the client-go style Callbacks through which applications (the
// job runner, notify hooks, metrics) learn about leadership changes.
//
// Nothing in this package knows about jobs or networks; modes live in the
// sub-packages static, env and udp.
package election
