//go:build !race

package udptest

const (
	raceEnabled = false
	raceDivisor = 1
)
