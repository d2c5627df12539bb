// Package trigger is "run now" (`lanleader trigger JOB`): the request and
// answer a client and the leader exchange inside the udp protocol's
// TRIGGER and TRIGGER_ANSWER payloads, the leader's Handler that starts a
// manual run, and the client side.
//
// Safety: the protocol authenticates the packets (with a keyring), drops
// replays of a request (same sender, incarnation and nonce) for a minute on
// every node, and rate-limits them. The Handler adds what the protocol
// cannot know, without comparing clocks: a run request carries a ticket the
// leading process issued for that job a moment before (RunJob asks for it),
// and the leader decides each ticket once (tickets.go): a run request sent
// again with the same ticket gets the first one's answer (the same run id)
// and starts nothing, so the client may resend it. A replay, whenever it
// comes and wherever it goes (the same leader, a restarted one, the next
// one), runs nothing.
package trigger
