// Package heartbeat holds the failure-detection arithmetic of lanleader's UDP
// election: when a follower should suspect its leader, how that threshold
// adapts to packet loss, and how long a suspecting node backs off before it
// claims. Everything here is pure: time comes in as arguments and randomness
// from a caller-supplied *rand.Rand, so the protocol core and the simulator
// can replay it exactly.
package heartbeat
