//go:build !race

package reply

const raceEnabled = false
