//go:build race

package udptest

// raceEnabled scales the default number of seeded scenarios down under the
// race detector (about 10× slower), keeping `go test -race` under a minute
// on 2 cores. Without -race the full count runs.
const raceEnabled = true
