//go:build race

package udptest

// raceDivisor scales down seeded runs under the race detector: a
// simulation is one goroutine, so -race finds nothing in a seed that the
// same seed without it would, while it makes every event many times
// slower. Since the job runner's own rules run on every node (jobs.Core),
// the full seed counts no longer fit the test timeout under -race on a
// loaded machine; a quarter of them still exercise every code path, and
// `go test ./election/udp/udptest` (no -race) runs them all. The long
// flapping run is shortened too (see TestFlappingShort).
const (
	raceEnabled = true
	raceDivisor = 4
)
