// Package config loads lanleader's YAML config file (election settings,
// jobs, notify hooks) strictly: unknown keys, wrong types, bad schedules and
// duplicate job names are errors, and every error names the file, the line,
// the key path and the reason, e.g.
//
//	demo.yaml:12: jobs[1].schedule: "61 * * * *": minute field "61": end of range (61) above maximum (59)
//
// The file is read until two reads SettleGap apart agree (read.go), so a
// file being rewritten in place is never taken half-written.
//
// The election section is only decoded and type-checked here; the CLI merges
// it with its flags and validates the semantics.
package config
