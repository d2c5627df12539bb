// Package httpapi is lanleader's local HTTP endpoint: /livez, /readyz,
// /status (JSON, a StatusDoc) and /metrics (Prometheus), served on
// loopback by default. It also holds the client side used by
// "lanleader status": FetchStatus and WriteTable.
//
// It knows the election contract and the metrics package; the job runner's
// and the elector's extra views come in as opaque JSON-able values, so the
// package does not depend on jobs or udp.
package httpapi
