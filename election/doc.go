// Package election defines the contract every lanleader election mode
// implements: an Elector that decides whether this node leads, the Status it
// reports, and the client-go style Callbacks through which applications (the
// job runner, notify hooks, metrics) learn about leadership changes.
//
// Succession is each mode's promise about a deposed leader: whether, and
// how soon after its successor starts, it stops acting as leader. Anything
// that runs one copy of some work on the leader only (the job runner's
// runs, leader-only services) builds its rule on it: the successor starts
// its copy only once the old copy is known stopped, or can no longer be
// running, that is when the deposed leader's last moment of acting plus
// the work's own stop time (its kill grace, its stop grace) are over
// (Succession.QuietAt).
//
// Nothing in this package knows about jobs or networks; modes live in the
// sub-packages static, env and udp.
package election
