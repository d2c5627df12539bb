// Package memnet is an in-memory network of udp.Transports, for testing code
// that uses a Transport (the UDP elector, `lanleader who`, your own) without
// sockets. Nodes join at made-up addresses; broadcasts reach every other node;
// partitions, one-way blocks, random loss and delay are set at run time.
//
// It uses only channels, mutexes and timers, so it works inside a
// testing/synctest bubble, where delays run on the bubble's fake clock: create
// the Network inside the bubble.
package memnet
