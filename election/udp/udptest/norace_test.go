//go:build !race

package udptest

const raceEnabled = false
