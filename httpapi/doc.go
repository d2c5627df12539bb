// Package httpapi is lanleader's local HTTP endpoint: /livez, /readyz,
// /status (JSON, a StatusDoc), /jobs (JSON, a JobsDoc), /metrics
// (Prometheus) and the status page at /, served on loopback by default.
// It also holds the client side used by "lanleader status" and "lanleader
// jobs": FetchStatus, FetchJobs and the tables.
//
// Where the rules live:
//   - exposure.go: which Host names a request may give (DNS rebinding)
//     and whether runs' output tails are served, from the bound address;
//   - conncap.go: the cap on open connections, which sheds the oldest idle
//     one; server.go: the deadlines (ReadHeaderTimeout, ReadTimeout,
//     WriteTimeout, IdleTimeout).
//
// It knows the election contract, the job runner's views and the metrics
// package; the elector's extra view comes in as an opaque JSON-able value,
// so the package does not depend on udp.
package httpapi
