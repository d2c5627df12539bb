// Package trigger is "run now" (`lanleader trigger JOB`): the request and
// answer a client and the leader exchange inside the udp protocol's
// TRIGGER and TRIGGER_ANSWER payloads, the leader's Handler that starts a
// manual run, and the client side.
//
// Safety: the protocol authenticates the packets (with a keyring), drops
// replays of a request (same sender, incarnation and nonce) for a minute on
// every node, and rate-limits them. The Handler adds what the protocol
// cannot know: a request older than MaxAge by the client's clock, or sent
// before this node started (it cannot have remembered it), runs nothing.
package trigger
