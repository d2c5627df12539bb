// Package metrics holds lanleader's Prometheus metrics on a registry of its
// own (not the global default, so embedding programs keep theirs clean).
//
// It knows the election package only: the job runner and the UDP elector
// report through plain methods (JobFinished, PacketReceived) so that
// neither depends on this package nor this package on them.
package metrics
