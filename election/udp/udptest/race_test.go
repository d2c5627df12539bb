//go:build race

package udptest

// raceDivisor scales down seeded runs under the race detector. The 2,000
// default scenarios take a few seconds even with -race, so they all run;
// only the long flapping run is shortened (see TestFlappingShort).
const (
	raceEnabled = true
	raceDivisor = 1
)
