// Package protocol is the pure core of lanleader's UDP election: a state
// machine driven only by Tick(now) and Step(now, msg) that returns the
// messages to send. It opens no sockets, starts no goroutines, never reads
// the clock and takes its randomness from its Config, so every behaviour can
// be replayed exactly in the simulator (package udptest).
package protocol
