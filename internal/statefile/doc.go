// Package statefile keeps what one lanleader node must remember across
// restarts, a power cut of the whole cluster included: the highest
// election round and term it used or saw, the binding of its last quorum
// vote or ack and the promise a restart must keep, its replay table (per peer the newest incarnation and
// sequence number accepted), its job ledger (what it started and what it
// heard others started) and its run history. Each node keeps
// its own files; there is no shared store.
//
// The state file holds all of it and is written atomically and durably
// (write a temporary file, fsync, rename, fsync the directory) whenever
// anything but the replay table changes, so a crash or power cut leaves
// the old or the new version, never a mix. Its format is a header line
// naming the format version, the body's length and CRC-32C, then the JSON
// body; a file that fails any check is reported with what was wrong and
// the node starts cold. Files of earlier format versions are read (their
// missing fields are zero), and the next write upgrades them; a file of a
// newer format (a downgrade) is reported as such (NewerFormatError), the
// node starts cold, and the next write replaces it in this format.
//
// The replay table changes with every packet and is only a replay floor,
// so a change of it alone goes to the replay file (ReplayFileName) in
// place, without fsync; loading takes per peer the newer floor of the two
// files, and a missing or damaged replay file only leaves the state
// file's older one.
package statefile
