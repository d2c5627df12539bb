// Package wire is the binary encoding of lanleader's UDP protocol messages
// and their optional authentication.
//
// A packet is a fixed header (magic, version, type, auth scheme), the
// message's fields with explicit lengths, and, when a Keyring is configured,
// an HMAC-SHA256 trailer over everything before it. Every length is checked
// against a documented bound before it is used, so Decode neither panics nor
// allocates more than MaxPacketSize bytes, whatever it is given. The byte
// layout is documented in docs/wire.md.
//
// The codec only decodes and authenticates. Deciding what a message means —
// other clusters, replayed or stale sequence numbers — is the protocol core's
// job (package protocol).
package wire
