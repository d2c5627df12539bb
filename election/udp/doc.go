// Package udp is lanleader's broadcast election mode: nodes on one LAN agree
// on a leader by exchanging heartbeats and claims over UDP, with no store.
//
// The protocol itself is the pure state machine in package protocol; package
// wire encodes and authenticates its messages. This package supplies the
// Transport (subnet broadcast or a unicast peer list) and the Elector that
// drives the protocol with real time and a Transport.
package udp
