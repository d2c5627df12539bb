// Package statefile keeps what one lanleader node must remember across
// restarts, a power cut of the whole cluster included: the highest
// election round and term it used or saw, the binding of its last quorum
// vote or ack, its replay table (per peer the newest incarnation and
// sequence number accepted), its job ledger (what it started and what it
// heard others started) and its run history. Each node keeps
// its own file; there is no shared store.
//
// The file is written atomically (write a temporary file, fsync, rename,
// fsync the directory), so a crash leaves the old or the new version, never
// a mix. Its format is a header line naming the format version, the body's
// length and CRC-32C, then the JSON body; a file that fails any check is
// reported with what was wrong and the node starts cold. Files of earlier
// format versions are read (their missing fields are zero), and the next
// write upgrades them.
package statefile
